// Package loccache is the per-event-loop location cache of locality
// routing: μ-shard → (owner region, epoch, migration state, source
// region). The router reads it on every
// request for a μ-shard; that read is the whole cost of locality routing
// on the request path, never a call to the control store.
//
// Data flow: a miss sends the router to the location service (off the
// request path, asynchronously), whose answer comes back to the loop and
// is Put. A forwarded request carries the epoch it was routed with; an
// owner region that refuses it as the wrong owner makes the router
// Invalidate that epoch and re-read the location bypassing the cache.
//
// Bound and eviction: at most Config.Capacity entries, evicted by CLOCK
// (second chance): a hit sets the entry's reference bit, and the hand
// that looks for a victim clears bits until it finds an entry not used
// since its last pass. CLOCK rather than LRU because a hit then writes one
// bool, not a list splice.
//
// Invariant: while an entry stays cached its view never goes back: its
// epoch never decreases, and within one epoch its state only advances
// Prepare → Migrating → Stable. A Put of an older view than the cached
// one is ignored (a slow read must not undo a newer one, nor a late
// Prepare hand serving back to the source), and Invalidate drops an entry
// only if its epoch is no newer than the one refused.
//
// Ownership and goroutines: a Cache belongs to one event loop and is not
// safe for concurrent use, by design, so a hit takes no lock. Stats alone
// may be called from any goroutine (metrics). Get does not allocate; Put
// allocates a copy of the μ-shard's field when it adds an entry. The cache
// starts no goroutine.
package loccache
