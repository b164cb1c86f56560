// Package sampler is strata's key-hash sampler: it picks a fixed subset of
// keys by hash and records every access to them, so working sets, the
// duplication factor, hotness and the promotion model can be computed per
// key family from a small, unbiased sample (the long-tail study's method).
//
// # Data path
//
// For every request an event loop calls Sampled(key): XXH64(key, Seed) mod
// Rate == 0, a hash and a modulo with no lock and no allocation. For a
// sampled key it calls Record once the tiers have answered. Record copies
// the record and its key into a slot of a lock-free ring and returns; if
// the ring is full the record is dropped and counted, never waited for.
// One drainer goroutine takes records off the ring, names their family,
// appends them to the sample log (JSON Lines, see package samplelog) and to
// the live buffer from which Live computes the same Report `strata report`
// computes from the log files.
//
//	event loops ──Sampled──▶ (hash mod rate)
//	            ──Record───▶ ring (MPSC, fixed slots) ──drainer──▶ family ──▶ sample log files
//	                                                                     └──▶ live buffer ──Live──▶ Report
//
// # Goroutines and lifecycle
//
//  1. New validates the Config, allocates the ring and prepares the log
//     directory. It starts nothing.
//  2. Start starts the drainer, the only goroutine the sampler owns. It
//     drains when a producer finds the ring half full, every DrainInterval,
//     and on Sync. Without a log directory it stops its ticker while the
//     ring is empty, and the next record restarts it, so an idle sampler
//     does not wake the process.
//  3. Stop(ctx) refuses further records, drains the ring, flushes and closes
//     the log (publishing the last file under its final name) and stops the
//     drainer. It is idempotent and waits no longer than ctx.
//
// Every method is safe from any goroutine. Records recorded before Start
// wait in the ring. A record racing with Stop may be lost: refused and
// counted as dropped, or accepted after the final drain (then Recorded
// exceeds Drained).
//
// # Buffer ownership
//
// Record.Key is borrowed: Record copies up to MaxKeyLen bytes into the ring
// before it returns, so the caller may reuse the buffer at once (an event
// loop's read buffer, for example). The ring's slots belong to the ring;
// the drainer copies the key out into the log entry.
//
// # Ordering
//
// Records from one event loop reach the log in the order that loop
// recorded them. Records from different loops interleave in the order they
// claimed ring slots, which is close to but not exactly time order; every
// record carries its own time, and reports never depend on line order.
//
// # Rate and seed
//
// DefaultRate is 1,000,000 (the study's rate); 0 disables sampling. The
// seed must differ from the router's shard-hash seed, otherwise sampled
// keys would all map to a few shards. Because the hash is standard XXH64,
// any tool can tell which keys a strata samples (see KeyHash).
//
// # Counters
//
// Stats are plain counters: records accepted, dropped (ring full or after
// Stop), drained, written, log errors, files completed, keys cut to
// MaxKeyLen and live-buffer evictions. Exporting them (Prometheus, `stats
// sampler`) is the caller's business.
package sampler
