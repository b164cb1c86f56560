// Package memcached is a tier on a pool of real memcached servers: each
// key goes to the server that owns its shard, over a pipelined connection
// that lives on the event loop of the client connection that asked.
//
// Data path. The proxy issues an Op on event loop L with Pool.Do. The key
// hashes to a shard (xxhash with Config.Seed, mod Config.Shards), the
// shard map names the server, and the request is encoded in the meta
// protocol (package metacodec) into the write buffer of the connection to
// that server owned by loop L. Once the loop's round has run the
// callbacks of every event its poll returned, the proxy calls
// FlushLoop(L): each connection's batch — the requests of every client
// the round served — leaves with one write. The
// server's replies arrive on loop L; each complete reply is parsed, paired
// with the oldest request waiting on the connection (memcached answers in
// order, and the encoder never asks for quiet replies), copied into the
// Op's Result, and the Op completes with Done, still on loop L. No lock
// and no goroutine hand-off is on this path.
//
// Loops. A pool is built on the proxy's event loops (New takes Loops and
// joins them), so whoever serves the loops starts the pool (Start) before
// their first client and flushes it every round; Do fails with
// ErrNotStarted until then.
//
// Goroutines. The pool owns three kinds, all ended by Close: the ticker
// (advances the pool clock and runs the timeout check on every loop
// through Loops.Run; it sleeps, the clock with it, while no loop holds a
// request or a backoff and every server is up), one short-lived dialler per connection attempt
// (connects with DialTimeout, with Config.TLS handshakes within it, then
// Loops.Attach enrols the connection on its loop; tls.go), and one prober per down server (connects and sends "version"
// every ProbeInterval until it answers, then runs the returning protocol). Everything a connection owns is
// touched only on its loop; routing reads an immutable snapshot of the
// shard map and servers with one atomic load; counters are per-loop
// atomics. Apart from the pool, a ServerTotals (the servers' item and
// memory stats for strata's stats command) owns one polling goroutine,
// started by Start and ended by Stop, that asks each server on a side
// connection of its own, never on the data plane's.
//
// Buffers. The pool reads Op.Req, key and value included, until the Op
// is done, as tiers.Op allows, and keeps the Op until Done: most requests
// are encoded (the key and value copied) before Do returns, but one that
// waits in a connection's backlog is encoded when room frees, and one on
// an MD5 ketama layout may be held for a batch and encoded when the batch
// is sent, by the loop's next flush round at the latest (batch.go).
// Replies are parsed in place from the loop's inbound buffer, which is
// never consumed past the last complete reply; a value is copied into
// Op.Res.Value, reusing its capacity, so a warm hit allocates nothing.
//
// Ordering and failure. Requests on one connection are answered in order.
// A request that waits longer than RequestTimeout fails with ErrTimeout
// and so does everything behind it on that connection, which is then
// closed and redialled: once a reply is missing, the pairing of later
// replies cannot be trusted. The same holds for a malformed or unexpected
// reply. A connection that fails is redialled with exponential backoff. A
// server that fails FailureThreshold times in a row is marked down: its
// shards fail at once with "backend <addr> is down" (unless RehashOnDown)
// until a probe answers and the returning protocol below has made it
// safe; then it is up again without a restart. In a pool that flushes on
// return, one failed write is enough (see Taint below). Each connection
// bounds the
// requests written and awaiting replies, and their bytes; past a bound,
// requests wait in the connection's backlog, in order and not yet
// encoded, and are written as replies free room. They never fail for it:
// the issuer bounds what it has in flight (the proxy bounds each client
// connection), which bounds the backlog.
//
// Stalls (stall.go). A write queued toward a server but not yet written
// when the process stopped (SIGSTOP, a frozen container) is failed with
// stall.ErrHeld by the first flush round after it, never sent: its client
// may have given up meanwhile. Reads are still sent. A write an upper
// tier (or a move's handoff) parked across the stall and submits after it
// is failed the same way at submit, by the stall stamp of its Op
// (tiers.Op.Stall). The cost is one load of the stall generation per
// flush round and one comparison per request.
//
// Returning (returning.go). A server is up, down or returning, and only an
// up server is routed to. The danger is a server that hung rather than
// died (SIGSTOP, a stalled host): requests we wrote before giving up on it
// — a promotion's add of a value since overwritten, a delete — sit in its
// socket buffers and run when it continues, even though we closed those
// connections; and while it was down, writes skipped invalidating its
// copies. So an answered probe leads to "returning", and the prober, on
// the probe's connection, does three things in order before "up":
//
//  1. Fence. Every loop's timeout check drops its connection (or dial) to
//     a server that is not up, failing what waits on it, and records its
//     local address as a suspect if requests were outstanding on it; a
//     connection reset for a timeout or lost earlier in the failure
//     streak is recorded the same way. The prober waits until every loop
//     that ever dialled has fenced this down spell. A dial that completes
//     while the server is not up writes nothing.
//  2. Drain. It asks the server "stats conns" until no suspect is listed,
//     in answers spanning at least ProbeInterval. memcached lists a
//     connection from the moment a worker thread registers it to its
//     close, and closes it only after it has read it to its end (our
//     FIN), running every request in it; so a suspect no longer listed
//     has run everything we ever wrote on it — provided it was listed
//     before our first request reached it. memcached accepts a connection
//     on one thread and registers it on a worker thread later; so the
//     first thing written on every connection is a no-op, and nothing
//     else until it is answered (conn.go, greeting). Every connection
//     that carried a request of ours was therefore listed before that
//     request arrived, and is listed until it has run. The ProbeInterval
//     span of clean answers is a margin, no longer part of the argument.
//  3. Flush (FlushOnReturn: an L1 pool, or RehashOnDown). flush_all runs
//     after every old request, so no copy from before the down spell
//     survives, including one a delayed promotion wrote.
//
// Taint. The same danger exists while a server is up, below
// FailureThreshold: a write that timed out or was lost unanswered may run
// later than a newer write's invalidation sent on another connection (a
// promotion's add of an old value lands after the delete that should have
// removed it), and a delete refused at once (busy, backing off) or
// answered with an error never ran. So in a pool that flushes on return,
// any such write marks the server down at once, before its Done runs (the
// caller may acknowledge a client who then reads again), and the server
// serves again only through the three steps above. A read that fails
// counts towards FailureThreshold only: it changes nothing. An add refused
// before it was sent is harmless too: it never ran, and it never removes
// anything.
//
// Nothing is routed to the server until step 3 is acknowledged, so every
// write acknowledged afterwards sees a clean server. Steps that fail or
// outlast ReturnTimeout send the server back down until the next probe.
// The argument assumes the server sees our connections' addresses as we
// do (no NAT between strata and memcached). A server that answers
// traffic while up ends a failure streak and clears its suspects: in a
// pool that flushes on return those are connections abandoned with only
// reads on them (a write would have marked the server down), and a read
// that runs late changes nothing.
//
// Servers and shards. The first shard map is the rendezvous map of
// package shardmap: even in expectation, and minimal movement when the
// list changes (SetServers). A pool managed by a control plane applies the
// versioned topologies it publishes instead (ApplyTopology, topology.go),
// and its server list is then membership only. Each loop counts the
// requests and bytes of every shard (load.go), with no lock and no
// allocation; ShardLoad sums them for the shard-assignment loop.
//
// Compat pools (compat.go). With Config.Compat the server of a key is the
// one an incumbent router or client would pick (package compat's Layout
// over the configured list, in order), so a fleet it filled is read warm;
// the key still hashes to a shard for the counters and RehashOnDown. A
// managed compat pool is converted warm to a published map: the map keeps
// shards on the layout (served by it, per key) and moves the others from
// it (shardmap.FromLayout). Such a move is a shard move whose A is, per
// key, the server the layout names; a key the layout already puts on B
// takes no handoff, so the proof below holds key by key. A pool with
// Config.ConvertFrom converts between two layouts the same way, B being
// per key too: the new layout's server (prior.go).
//
// Moves (move.go; the steps are package handoff's, shared with
// tiers/locality). A published map may carry, for a shard, a move from A
// to B in one of three phases; the control plane publishes them in order
// and each only once every live proxy has applied the one before, so at
// any moment two proxies are at most one phase apart. Writes here are
// set, delete and arithmetic; "delete at X" is an md that must succeed
// before the client is answered (if it fails, the write is reported as
// failed, never acknowledged). A write runs first at A, where fills read,
// whichever server owns (point 2 says why).
//
//	phase    owner  reads                         writes
//	(none)   A      A                             A
//	prepare  A      A                             A, then delete at B
//	handoff  B      B; a miss is filled from A    delete at A, then B
//	settle   B      B                             delete at A, then B
//	final    B      B                             B
//
// A fill is: mg k N<lease> at B (a miss creates an empty placeholder and
// hands this reader alone the win flag W and the placeholder's CAS; other
// readers see Z and answer a miss), then mg k at A, then a check that the
// map in force still has the shard in handoff, then ms k C<cas>
// T<A's remaining TTL> at B; the reader serves A's value only if that ms
// stored. A failed fill removes its placeholder (md C<cas>). Reads during
// handoff and settle treat a placeholder as a miss.
//
// Why no read returns a value older than an acknowledged write W of k:
//
//  1. Direct reads. In every phase pair that can coexist (none/prepare,
//     prepare/handoff, handoff/settle, settle/final) the writers of both
//     phases write the side the readers of both phases read, or delete
//     it: prepare and none read A, and both write A; handoff, settle and
//     final read B, and all of them write B; a prepare writer deletes at
//     B before acknowledging, so a handoff reader of B never finds a
//     value older than a prepare write; a handoff or settle writer
//     deletes at A before acknowledging, so a prepare reader of A never
//     does either.
//  2. Fills. A fill F serves A's value v only if its ms stored, that is,
//     nothing wrote or deleted k at B between F's placeholder and its ms
//     (either changes the CAS or removes the item). Every W acknowledged
//     before F read A either touched B (handoff, settle, final writers
//     write B; prepare writers delete at B) or came from a prepare or
//     older writer, which wrote A. If W touched B after F's placeholder,
//     the ms fails; if before, W (a prepare, handoff or settle writer;
//     final writers are below) had run at A before it touched B, so F,
//     which reads A after its placeholder, reads W's value, a newer one
//     or nothing. The order is what makes this hold: a writer that
//     touched B first and A after could let F lease between the two
//     (after a delete at B, or once W's value left B: a set already
//     expired, an eviction), read A's old value before W reached A, and
//     store it with nothing at B to fail the ms
//     (TestWriteRacingFillAcrossProxies drives that interleaving). A
//     writer that wrote A only (prepare or older) wrote it before F read
//     it. Final writers
//     do not delete at A, which is why a fill checks, after reading A,
//     that its proxy has not applied settle: the control plane publishes
//     final only once every proxy applied settle, so every final write
//     starts after F read A, touches B after F's placeholder, and fails
//     F's ms.
//  3. After final, A's copies are unreachable, and must stay so while
//     they could be stale. The proof above assumes the destination holds
//     no old copy of the shard (a move's B, a failover's new owner): its
//     reads are trusted. So a server gets a shard it once held back only
//     after it was flushed (a new incarnation, reentry.go) or once every
//     value it held has expired (max item TTL since it lost the shard).
//     The pool cannot check this alone, since it sees only the maps it
//     applies; it is the control plane's rule. TestMoveBackNeedsFlush
//     shows what breaking it costs, and that a new incarnation repairs it.
//
// Read replicas (replica.go). A published map may give a shard O read
// replicas R1..Rn, each write-only or serving (shardmap.Replica), never
// together with a move. Reads spread round-robin (per event loop) over O
// and the serving replicas; a replica's read is a fill, as in handoff
// with O as the source: mg k N at R, on a win mg k at O, a check that the
// map still has R serving the shard under owner O, ms k C<cas> at R. A
// read that meets another reader's placeholder at R reads O instead.
// Every write — set, delete, arithmetic, append, CAS, and a touch or gat,
// which changes the TTL — runs at O alone, which answers, and then
// deletes k at every replica, serving or write-only, before the client is
// answered; if one of those deletes fails, the write is reported failed,
// never acknowledged. Replicas get a delete rather than the new value
// because deletes commute: two writes
// racing from two proxies may reach O in one order and R in the other,
// and R would keep the older value; a delete leaves R empty whatever the
// order, and the next read fills it from O, which is authoritative for
// CAS, arithmetic and append alike.
//
// The control plane steps a replica through write-only (joining),
// serving, write-only (leaving), gone, each step once every proxy applied
// the one before, so two proxies are at most one step apart:
//
//	step        reads of R   writes
//	(none)      -            O
//	joining     -            O, then delete at R
//	serving     R (fills)    O, then delete at R
//	leaving     -            O, then delete at R
//	gone        -            O
//
// Why no read returns a value older than an acknowledged write W of k:
//
//  4. Only serving proxies read R, and a proxy that may be serving
//     coexists only with joining, serving or leaving ones, all of which
//     delete at R before they acknowledge. R's values all come from
//     fills, and a fill F stores O's value only if nothing deleted k at R
//     between its placeholder and its ms. If W's delete at R came after
//     F's placeholder, F's ms fails; if before, W had written O before
//     that, so F read W's value or a newer one. A delete at R that failed
//     left R as it was, but then W is not acknowledged: R holds no value
//     older than the last acknowledged write, whose delete did reach R.
//     A proxy that holds R down reads O instead and fails its writes
//     (their deletes at R fail at once) until the control plane drops R.
//  5. Fills that outlive serving: a fill checks, after reading O, that
//     its map still has R serving; the control plane removes R only once
//     every proxy applied leaving, so no fill stores at R afterwards
//     from a read older than that.
//  6. A joining R must hold no old copy of the shard: no proxy reads it
//     while joining, and once serving, its fills trust that whatever R
//     holds arrived under the deletes above. So, as for a move's
//     destination (point 3), a server that held the shard before, as
//     owner or replica, becomes its replica again only after a flush (a
//     new incarnation) or once its values expired: the control plane's
//     rule, which TestReplicaBackNeedsFlush shows the cost of breaking.
//
// When O fails over, its replicas turn write-only in the same map: a
// proxy still on the old map reads R and fails its writes at O, while the
// new owner's writers delete at R; a replica that dies is dropped, and
// the control plane flushes it before it serves again.
//
// Failover (A dead or hung) skips the phases: nothing can be read from
// A. The new owner serves at once; a proxy still on the old map fails its
// writes against A (never acknowledged). A hung A that continues holds old
// values, so the control plane lists it as returning under a new
// incarnation and every pool flushes it before it is read again
// (reentry.go), including pools that never saw it fail.
//
// Misses are always allowed: a write that races a fill makes the fill
// answer a miss, and incr/decr/append of a key still only at A during
// handoff finds nothing at B. A request for a shard that is not moving
// pays one length test for all this and allocates nothing; a move
// allocates one small state machine per request.
package memcached
