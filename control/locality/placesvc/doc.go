// Package placesvc is the placement service of locality routing: one
// active instance per fleet (the election locality-placement, in any
// strata or in strata control) that creates the rows of new μ-shards,
// merges the strata's access counters, decides migrations with the pure
// placement.Decide, and carries them out.
//
// Data flow (store layout in locsvc.Layout):
//
//  1. A Runner campaigns. Leading, it reads the live members' acks, then
//     Recover reads the journal and takes every unfinished move over
//     (rolled forward: the destination may have served already).
//  2. It follows create/ (Create: the row, owner = the asking region,
//     fenced on the leadership; the request is deleted), counters/
//     (Counts: merged into a placement.Decayed per μ-shard and region;
//     a μ-shard with a remote access becomes due, once however many
//     batches name it), acks/, capacity/ (the members' cache memory
//     reports: SetCapacities), pins/, rulepins/ and migrate/ (manual
//     moves).
//  3. Every Tick a Round advances the moves in flight and decides on the
//     μ-shards due. Only μ-shards told of remote accesses are decided on
//     (plus pins and manual requests), never a scan of the table. The
//     round's regions come from the pure RegionCapacities: a region whose
//     freshest report is at or above CapacityCeiling is no candidate
//     (unless every reporting region is), and spare memory breaks ties
//     between equal scores. Pins still win over capacity.
//
// A move of epoch e+1 (loctable): Migrate writes Prepare and the journal
// entry; once every live member acknowledged that revision (acks/, leased:
// a dead strata stops counting when its lease ends), Promote writes
// Migrating; after Grace on the leader's clock and once every live member
// acknowledged the Migrating write too (a source loop still in Prepare
// would serve what the destination no longer deletes there), Settle
// writes Stable and removes the journal entry. A successor waits a whole
// Grace again for a move it found Migrating.
//
// With FenceAfter, a member whose ack row went with its lease still holds
// moves up (at its last revision) for FenceAfter, and a new leader takes
// no step of a move before FenceAfter after it recovered: such a member
// may serve on an old view until then (locsvc's fence).
//
// Safety beyond the policy: no move, pinned or manual ones included,
// takes a μ-shard to a region it left less than MaxTTL + Grace ago (the
// move's time is its Promote): values it left there may still live. The
// policy's MinInterval ≥ MaxTTL makes that rare for automatic moves; for
// pins it is what keeps them safe.
//
// Manual moves: a request (migrate/<name>, written by View.Migrate) is
// consumed by the leader at once and decided on at the next round like a
// pin. What came of it goes to outcomes/<name> (locsvc.Outcome), fenced:
// refused (dropped, with the reason), waiting (return_wait: kept until
// the μ-shard may return, and adopted from that row by a successor) or
// started (in the move's own transaction). A new request deletes the
// row, so View.MuShard's LastRequest answers the latest one.
//
// Admin: View implements admin.LocalityControl and View.RegionView an
// admin.RegionView, from the store in any strata (a leader's decayed
// counts where it leads). RegionView reads the whole location table, so
// an answer is reused for a window (RegionsEvery for the page's polls).
//
// Time and randomness: a Leader reads the time only from its arguments
// and randomness only from Config.Seed (hashed with the μ-shard's name),
// so tests drive it with a manual clock and assert exact outcomes; the
// Runner passes Config.Now.
//
// Goroutines: a Runner owns one (campaign, dispatch, rounds) and, while
// leading, one per followed prefix; Stop ends them and resigns. A Leader
// starts none; its methods are safe for concurrent use (the admin API
// reads Counters while the Runner drives it), and none holds a lock
// across a store call: a round reads, decides under the lock on what it
// read, writes without the lock and records under it (leader_round.go),
// so a read never waits for a round's etcd round trips.
package placesvc
