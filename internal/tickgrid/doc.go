// Package tickgrid puts a process's periodic timers on one grid, so that
// an idle process wakes once for all the work due at the same moment
// instead of once per timer.
//
// Every wake-up of an idle Go process costs several thread wake-ups
// beyond the goroutine it runs: the runtime's monitor thread, the thread
// waiting in the network poller and a second thread looking for work. Two
// timers of 1s and 125ms started at unrelated moments wake the process
// nine times a second; on one grid — both firing at multiples of their
// period since the same origin — eight, the 1s one riding on every eighth
// 125ms tick. The periods a strata process uses (125ms, 500ms, 1s, 2s) are
// multiples of one another, so they share most of their wake-ups.
//
// Until is the decision, a pure function of the time and the period;
// NewTicker is a time.Ticker on the grid. A ticker keeps its period: its
// first tick comes sooner than a period after it starts (at the next
// multiple), every later one a period after the one before.
//
// Sleeper is the waiting underneath: on Linux a timerfd read in the
// network poller, which costs an idle process one thread wake-up where a
// runtime timer costs four to six (sleeper.go says which). A goroutine
// that does its periodic work itself (the stall heartbeat) sleeps on one
// directly; a Ticker's goroutine sleeps on one and hands the tick over,
// one wake-up more.
//
// Rides is periodic work run on such a goroutine's wake-ups instead of
// on a goroutine of its own: sharing an instant shares the process's
// wake-up but not the thread's, since two goroutines made runnable at
// once each get a thread (rides.go measures it).
//
// Goroutines: NewTicker starts one, which Stop ends and waits for; a
// Sleeper and Rides start none.
package tickgrid
