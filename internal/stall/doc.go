// Package stall tells a strata process that it has stalled: that the
// whole process stopped and resumed (SIGSTOP and SIGCONT, a VM pause, a
// frozen container, a long swap storm), so that what it had read,
// buffered or queued before waking may belong to clients that gave up.
//
// The signal is a stall generation: a number that grows by one for each
// stall the process notices, read on the request path with one atomic
// load. The rules built on it live with the code that holds requests
// (proxy, tiers/memcached, tiers/locality/link): a write held through a
// stall is answered SERVER_ERROR (ErrHeld), never executed late.
//
// How a stall is noticed. A heartbeat goroutine reads the clock every
// Period while the generation is being read, IdlePeriod while it is not
// (an idle proxy then wakes four times a second for it, on the process's
// timer grid, internal/tickgrid, which other periodic work shares; each
// reading waits in the network poller and costs one thread wake-up,
// tickgrid.Sleeper); a gap
// between two successive readings longer than Threshold is a stall
// (Observe, a pure decision). After SIGCONT the event loops may run
// before the heartbeat does, so the request path does not wait for it:
// Detector.Gen compares the caller's clock with the heartbeat's last
// reading, and a reading older than Threshold declares the stall there
// and then. Whoever notices first declares it, once (the declaring side
// takes a lock and sets the reading, so the other side sees no gap).
//
// The threshold. A stall shorter than Threshold is not noticed, so the
// rule covers clients that wait at least Threshold before giving up on a
// request (memcached clients wait from half a second to seconds). A
// heartbeat starved of CPU for longer than Threshold while the process
// runs reads as a stall too; its cost is writes answered SERVER_ERROR,
// which a client may retry, never a stale value. The heartbeat reads both
// the monotonic and the wall clock, because a paused VM may resume with
// its monotonic clock stopped; a forward wall clock step longer than
// Threshold (an operator's date command) reads as a stall, with the same
// harmless cost.
//
// The idle slack. Idle, the heartbeat reads every half threshold, so a
// reading may come up to 250ms late before the gap reads as a stall
// (375ms when it read every quarter). That is enough because a timer
// that late is not a slow goroutine but a process left without CPU: on
// the shared two-core test machine at load averages of 13 to 16, 1,075
// timer readings over three minutes came a median 0.9ms late, 11 of them
// more than 100ms, the worst but one 214ms, and one 664ms, late enough to
// read as a stall at any period, the busy one included. Idle, nothing is
// held: a stall wrongly declared then touches only a connection opened
// within the threshold after it, whose first writes are refused with
// SERVER_ERROR, which a client may retry. And once a request reads the
// generation, the next reading puts the heartbeat back on Period, with
// nine tenths of the threshold as slack.
//
// Goroutines. Process returns the one detector of the process. Its
// heartbeat runs while some component holds it (Hold, returning the
// release): the proxy while serving, the memcached pools and the link
// client while started, and every ride (Every). With nobody holding it,
// Gen declares nothing.
//
// Rides. The heartbeat is the one goroutine an idle strata wakes
// for, so it also carries small periodic work due on its instants (the
// page's history sample, once a second), run after its reading: a
// goroutine of their own woken on the same instant would cost the idle
// process a second thread wake-up (tickgrid.Rides). A ride must be quick:
// it delays the next reading.
package stall
