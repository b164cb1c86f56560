// Package handoff is the warm-handoff protocol of a move, written once:
// a shard moving between memcached servers or to a read replica
// (tiers/memcached), and a μ-shard migrating between regions
// (tiers/locality). The destination owns the key at once; while the move
// lasts, a miss there reads the source and stores the value with its
// remaining TTL under a lease, so a write that comes in between wins, and
// every write at the destination also deletes the key at the source (never
// the reverse). A write runs first at the source, where fills read, and
// then at the destination, in every phase. DESIGN.md ("Moves without stale reads") states the
// invariant: after an acknowledged write of k, no later read returns an
// older value of k; a miss is always allowed.
//
// A Machine is the protocol for one client request, as pure steps over
// two ends: the primary (a write's owner, a fill's destination) and the
// other (where a write deletes, the source a fill reads). It starts no
// goroutine, does no I/O and reads no clock. The caller's shell owns the
// ends, sends each sub-request there and feeds the answer back; what the
// callers do differently on purpose is a field of Rules.
//
// # Usage contract
//
//  1. Keep a Rules for each kind of handoff the shell runs (a pool keeps
//     one for moves and one for replicas); do not change it while a
//     Machine uses it.
//  2. For a client Op that needs a handoff, Init a Machine (the zero value,
//     or one that reached Done) with the Rules, the Op, the key for the
//     sub-requests and the Request the shell sends them from (its own sub
//     Op's Req). The shell decides which start fits, from its own view of
//     the move: Write for a write (Request.IsWrite), naming the end fills
//     read from in its phase, Fill for a plain read (Request.IsRead) at a
//     destination while filling, Read for any other read where a fill's
//     placeholder may be about.
//  3. The start, and every Next after it, return an Action. Until it is
//     Done: send the sub-request the Machine wrote to the end the Action
//     names (Index picks a write's other end, in 0..others-1), and when its
//     answer is in, call Next with the answer. Exactly one sub-request is
//     in flight at a time. The shell may add what only it needs to the
//     sub-request before sending it (a layering's WantCAS); it must not
//     change what the protocol put there.
//  4. A sub-request that cannot be sent (no link, a server down) is
//     answered by the shell at once with tiers.StatusError; the Machine
//     treats it as any failed answer.
//  5. Next takes inForce, which reports whether the move the request
//     started under is still in force in the shell's current view. It is
//     called only after a fill read the source and before it stores: once
//     a caller stops filling, no fill of its own stores a value read
//     before, so a control plane that waits for every caller to stop also
//     waits out the fills.
//  6. On Done the client's Result holds the answer; the shell calls the
//     client's Done (after recycling the Machine, if Done may reuse it).
//     Count Action.Event as it comes, with the Action it rides on.
//
// Ownership: the Machine writes only the sub Request it was given and the
// client's Result, and reads the client's Request; it keeps key and the
// sub Request's buffers only until Done. A fill's value is held in the
// client's Result.Value, which the Fill sub-request borrows.
//
// What the steps guarantee: a write reaches every end before it is
// acknowledged, the fills' source first, and is failed if a delete at an
// other end failed; a fill serves the source's value only if its store
// with the lease's CAS succeeded, that is if nothing wrote or deleted the
// key at the primary since the lease; a placeholder never reads as a
// value. So a fill that leased after a write reached the destination
// reads the source after the write reached it too, and one that leased
// before loses its store to the write: no fill stores a value the write
// replaced, whatever happened to the write's own value since.
package handoff
