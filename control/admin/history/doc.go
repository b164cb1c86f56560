// Package history keeps the admin page's time series: one point per second
// of the headline figures (hit ratios, requests, latency percentiles,
// promotions, errors, connections; with locality routing, the remote
// fraction, migrations finished and in flight) from the moment the
// process started, so a page opened an hour later still shows the first
// minute.
//
// # Data flow
//
//	Source.Counters ──(every Interval)──▶ Recorder ──Add──▶ History ──Points──▶ JSON
//
// A Source returns cumulative counters; History turns two successive reads
// into one Point of deltas and rates. Points go into a fine ring (Fine
// points, one per tick; an hour by default) and are folded, a fixed number
// at a time, into a coarse ring (a day of one-minute points by default),
// so memory is bounded whatever the uptime: Fine + Coarse points.
//
// # Ownership and goroutines
//
// History is a pure value: Add takes the time as an argument and starts
// nothing, so tests drive it with exact times and assert exact points. It
// is not safe for concurrent use; Recorder serialises it under a mutex.
// Recorder starts no goroutine: it reads the Source on a Clock's runs,
// in strata the stall heartbeat's, which an idle process makes anyway
// (Clock says why). Start takes the baseline read at once and starts the
// runs; Stop ends them, waiting for one in progress. Stop is idempotent.
// Points may be called from any goroutine at any time and returns a copy.
//
// # Invariants
//
//   - Points come out oldest first with strictly increasing T.
//   - Every coarse point covers only time older than the oldest fine point
//     the fine ring still holds, so the two never overlap.
//   - A counter that goes backwards (a reload replaced a tier) yields a zero
//     delta for that interval, never a negative rate.
package history
