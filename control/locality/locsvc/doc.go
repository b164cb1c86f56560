// Package locsvc is the location service of locality routing, one per
// strata: the router's Directory (Resolve a μ-shard's location, count an
// Access) and the watch that keeps the routers' per-loop caches current.
// The placement service (control/locality/placesvc) is its counterpart
// that writes the rows; both meet in the store (Layout).
//
// Data flow:
//
//  1. A loop's cache misses; the router calls Resolve, off the request
//     path. A shared cache answers if it can; otherwise one read of the
//     row per name goes to the store, whatever number of loops asked. A
//     name without a row gets a create/<name> request (value: this
//     region) and its Resolves wait for the placement service to create
//     the row, which the watch delivers (bounded by CreateTimeout). Only
//     the placement leader writes rows, so two strata that see a new
//     μ-shard at once never create two.
//  2. One watch of the rows prefix feeds every change to the shared
//     cache and to Updater.Update. When the router calls done (every loop
//     applied the change), the service writes acks/<member> = the highest
//     revision whose changes are all applied, on its session lease. The
//     placement service promotes a migration from Prepare to Migrating
//     only once every live member acknowledged the Prepare write.
//  3. Access counts the requests of this strata's clients per μ-shard
//     (64 locked shards, no allocation once a μ-shard is known); every
//     CounterInterval one batch of the μ-shards touched goes to
//     counters/<member>/<i> (EncodeBatch), on the same lease: only what
//     can change a decision (Tally): those with a remote access, and the
//     local counts of those a peer region forwarded requests for; the
//     rest age here and are forgotten.
//  4. With Config.Capacity, every CounterInterval the region's cache
//     memory (bytes in use and size) goes to capacity/<member>
//     (EncodeCapacity), on the same lease, when it changed or every
//     CapacityEvery intervals: the placement service keeps μ-shards from
//     moving to a region that is full.
//
// Ordering: Resolve answers and Update calls leave one delivery
// goroutine in the order the service learnt them (under one lock), so a
// router that applies both on its loops in call order never caches an
// answer older than an update it already applied; with that, an ack of
// revision R means no loop of this strata routes with a view older than
// R. Before the watch knows its start revision no read goes out
// (ErrNotReady): a read older than the watch's start could otherwise be
// cached and never corrected.
//
// Store down: Resolve of a name not in the shared cache fails within
// ReadTimeout, and at once (ErrStoreDown) while the last read failed less
// than ReadTimeout ago, one probe read excepted; the loops' caches keep
// serving what they hold, and the acks stop, so no migration can pass
// Prepare. The watch resumes from its last revision when the store is
// back (a Reset after a compaction re-delivers the whole table).
//
// Fence (Config.FenceAfter): the first ack of every session also writes a
// join marker in the rows prefix, so the watch tells when every row
// change up to the joining is applied; while no ack is written, a read of
// the ack row every FenceAfter/4 proves the lease alive. Fenced says yes
// from FenceAfter after the last such proof, or while the join is not
// applied yet: the router then serves none of this region's μ-shards
// itself. The placement service waits FenceAfter after a member's lease
// ended (which is after its last proof) before it goes on without it, so
// a strata cut off the store alone has stopped serving on its view by
// the time a μ-shard can move away from its region.
//
// Goroutines: Start starts four (deliveries, watch, acks, counter
// shipments) plus one per name being read; Stop ends them all and answers
// what waits with an error. Resolve and Access are safe from any
// goroutine and never block on the store.
package locsvc
