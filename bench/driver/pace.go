package driver

import "time"

// Pacing the open loop. A latency that counts from a request's scheduled
// send time also counts how late the load generator itself sends it, so
// the generator must keep its timetable far more closely than the
// latencies it reports. Go's timers cannot: an idle runtime sleeps in
// epoll_wait, whose timeout is in whole milliseconds, so a request due in
// 300 µs leaves a millisecond later and queues behind its neighbours. That
// lateness read as 0.5–0.6 ms of p50 against a memcached that answers in
// tens of microseconds. The sender therefore sleeps the last stretch
// before a due time on a kernel timer (tickgrid.Sleeper.SleepFor: a
// timerfd read through the runtime's poller, where there is one), and
// uses a Go timer only for the part of a long wait that can afford a
// millisecond's error.

const (
	// preciseSpan is the longest wait slept on the kernel timer: a timer armed
	// for a longer wait stops this much early, which covers the runtime's
	// millisecond of granularity and the scheduling after it.
	preciseSpan = 2 * time.Millisecond
	// coarseMin is the shortest part of a wait worth a Go timer.
	coarseMin = time.Millisecond
)

// waitPlan splits a wait of d before the next due time into a coarse part,
// for a Go timer that may fire up to a millisecond late, and a precise
// part, slept on the kernel timer. After the coarse part the sender looks at the
// clock again, so only the precise part's figure is ever slept as is.
func waitPlan(d time.Duration) (coarse, precise time.Duration) {
	switch {
	case d <= 0:
		return 0, 0
	case d <= preciseSpan:
		return 0, d
	case d-preciseSpan < coarseMin:
		return 0, preciseSpan
	}
	return d - preciseSpan, 0
}
