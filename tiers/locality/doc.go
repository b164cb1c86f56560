// Package locality is the request path of locality routing: a tier that
// wraps the local tiers and sends each μ-shard key to the region that
// serves it, forwarding over region links (package link) when that is
// another region.
//
// Data flow. Do matches the key against the rules (keyrule). A key with
// no μ-shard goes to the inner tier unchanged, at the cost of the match.
// Otherwise the loop's location cache (loccache) gives the μ-shard's
// view: owner, epoch, migration state and source. The steady local case
// (Stable, owned here) counts the access and goes to the inner tier with
// no further work and no allocation. Everything else runs as a task
// (task.go), a state machine on the request's event loop:
//
//   - cache miss: Directory.Resolve off the loop; the request parks, with
//     every other request for that μ-shard on the loop, and all resume in
//     arrival order, in one callback, once the answer is cached (resumed
//     through the executor, Deps.Loops: the proxy's loop handle). The
//     wait is bounded by ForwardTimeout; then reads miss and writes
//     answer SERVER_ERROR, counted owner_unreachable.
//   - served elsewhere: forwarded over the link with the view's epoch. A
//     "SERVER_ERROR wrong_owner" answer invalidates that epoch's entry,
//     reads the location fresh (bypassing every cache) and retries once;
//     an unreachable region (or a second refusal) makes reads miss and
//     writes fail.
//   - served here during a move (the contract's states; the steps are
//     package tiers/handoff's, shared with tiers/memcached): in Prepare this
//     region is the source and still serves, and each write or delete
//     also deletes the key at the destination (md with the source marker)
//     before it is acknowledged; in Migrating this region is the
//     destination: writes and deletes also delete at the source, and a
//     plain read that misses takes a lease here (mg N → W), reads the
//     source with the source marker, and stores the value with
//     ms C<lease> and its remaining TTL, so a write or delete that came
//     in between wins and the read answers a miss. Every write (set,
//     arith, delete) runs first at the source, where fills read, then at
//     the destination: here first in Prepare, there first in Migrating.
//     Run the other way, a miss at the destination could lease between
//     the two (after a delete, or a set already expired), read the old
//     value at the source before the write reached it, and store it
//     after, with nothing at the destination to make the store fail. A
//     failed delete at the other side fails the request (SERVER_ERROR): a
//     miss later is allowed, a stale value never. Reads that do not fill
//     skip placeholders (a lease's empty item reads as a miss, and is
//     read from the tier of record so the layering never promotes it).
//   - just settled here (settle.go): from when this strata first sees a
//     μ-shard migrating here until a fill lease after it sees it Stable,
//     a Stable view still deletes at the old source on writes (there
//     first) and reads skip placeholders, because fills started under
//     Migrating, on any loop, in another strata of the region, or in one
//     that applies Stable later, may still be under way. The window is
//     tier-wide, so a loop that never cached the μ-shard while it
//     migrated is covered.
//
// Link requests (tiers.Request.Link, set by the proxy's link listener)
// are never forwarded. One with the source marker goes to the inner tier
// without an ownership check. Any other is served if this region serves
// the μ-shard in its view, and refused with linkproto.ErrWrongOwner
// ("SERVER_ERROR wrong_owner") if not; before deciding, the view is read
// fresh once when the sender's epoch is newer than ours, or equal while
// we would refuse (our view may lag a Prepare → Migrating step, which
// keeps the epoch).
//
// Stalls: an owner is never handed a ghost write by a peer that stalled,
// where the stall is of the peer's process (SIGSTOP, a frozen container,
// a long pause of its own), because every way a forward of an abandoned
// write could leave the peer is closed there:
//
//   - read by the peer's proxy during the stall, or held unparsed across
//     it: refused at the proxy (SERVER_ERROR), never reaches this tier;
//   - queued on a link connection but not written when the peer stopped:
//     failed by the link client's first flush round after it (package
//     link, stall.go);
//   - parked in a task across the stall (waiting for Resolve, or for the
//     reply of a migration's previous step) and sent after it: the task's
//     sub-requests carry the stall stamp of its client's request
//     (tiers.Op.Stall), and the link client and the memcached pools fail
//     a write stamped before the stall (stall.ErrHeld) instead of sending
//     it; a task's write to the local tiers is checked here too
//     (Tier.local), for an embedded store has no queue that would;
//   - written into the peer's socket before it stopped: the kernel, which
//     a process stop does not stop, delivers it while the client still
//     waits, so the owner runs it as it runs any request in flight — not
//     a ghost. An owner that is itself stopped holds what arrived on its
//     link listener like any client bytes (the proxy's rule), so it cannot
//     run the forward late either.
//
// So the receiver needs no stall rule of its own, and the link token
// carries no stall generation (package link's doc says why one would not
// help). One case is outside this argument: a pause of the peer's whole
// machine (a VM paused, its kernel too) delivers bytes it had written
// before the pause after it. For that a forwarded write carries a
// deadline in its sender's wall clock (linkproto), the moment its sender
// answers it as failed less link.Config.ClockSkew, and route refuses a
// link write past it (ErrLate, counted in Stats.Late): sound as far as
// the regions' clocks agree within ClockSkew.
//
// TTL bound: every write of a μ-shard key (set, touch, gat, N) has its
// TTL clamped to MaxTTL ("never" and absolute times included), so a
// region's copies are gone by the time placement's min_interval lets the
// μ-shard return.
//
// The wire format of a link (owned here, spelt by package linkproto):
// meta commands with the opaque token "Oe<epoch>" for a forwarded request
// and "Osrc" for a source read or delete; the refusal is
// "SERVER_ERROR wrong_owner".
//
// Ordering within a client connection (Phase): of two requests for one
// μ-shard key, the route of each is decided when it runs, and a migration
// can switch it between them, so neither the link nor the local tiers
// keep their order. A μ-shard write is therefore tiers.PhaseExclusive (no
// other request of its key in flight on the connection, before or after
// it) and reads take phase 1 (or the inner tier's read phase): reads go
// out together, and nothing overtakes a write or is overtaken by one. A
// pipelining client pays one round trip per write of one key; other keys
// are not held.
//
// Update (for the location service's watch) refreshes the cached views of
// every loop that has served a μ-shard request (never filling new
// entries) and calls done after the last; a loop that never served one
// has nothing cached. The service must have made the change visible to
// Resolve before calling Update.
//
// Goroutines: none of its own. Resolve's answers and timeouts (one timer
// per lookup) come back to the loop through the executor; a task never
// leaves its loop. Counters are atomics, read by Stats from any goroutine.
package locality
