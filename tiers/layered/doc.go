// Package layered puts a thin L1 tier over a fat L2 tier with the long-tail
// paper's probabilistic promotion.
//
// A plain get (get, mg with v/f/k/s/O/q) tries L1, then L2 on a miss; an L2
// hit is copied into L1 with probability 1/N, using add so it never
// overwrites a newer L1 value, with a TTL no longer than L2's remaining TTL
// nor l1.max_ttl. Reads that need the item of record (CAS, TTL, access
// facts, the meta win/stale machinery) go to L2 only. Writes (every set
// mode, delete, incr/decr, touch/gat) go to L2 and then remove the key from
// L1: an invalidation is idempotent and commutes with other invalidations,
// which a refresh-by-replace would not, so concurrent writes can never leave
// an older value in L1 than in L2. flush_all goes to both.
//
// Invariant: through one strata, once a write is acknowledged no later get
// returns an older value. A fill guard (tiers/fillguard) orders promotions
// that raced with a write behind the write's invalidation; the write is
// acknowledged only after its L1 invalidation completed. And as from one
// memcached, no get returns an older value than a get answered before it:
// a write is marked on its slot from the moment it is sent until its
// invalidation, no promotion begins meanwhile, and an L2 hit that finds a
// write marked (whose new value it may hold, while L1 may still get or
// keep an older copy) removes L1's copy, behind any promotion in flight,
// before it answers.
//
// L1 failures are invisible to clients: an L1 error reads as a miss and an
// invalidation that fails does not fail the write. That is safe only
// because the L1 tier keeps this contract: once an invalidation (or a
// promotion's add) has failed, or been abandoned unanswered, the L1 tier
// serves no copy that it could have left behind — a memcached pool with
// FlushOnReturn takes the server out of service before the failure is
// reported and flushes it, once everything sent to it has run, before it
// serves again; the embedded store never fails. l1.max_ttl bounds only the
// staleness of other strata's L1 copies. L2 failures come back as
// StatusError and reach the client as SERVER_ERROR.
//
// Goroutines: none. Callbacks run on the goroutine that completes the
// sub-operation, which for every tier is the operation's own event loop; a
// write delayed behind a promotion resumes on its loop through the
// Executor New takes (the proxy's loop handle).
package layered
