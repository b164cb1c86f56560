// Package memcached is a tier on a pool of real memcached servers: each
// key goes to the server that owns its shard, over a pipelined connection
// that lives on the event loop of the client connection that asked.
//
// Data path. The proxy issues an Op on event loop L with Pool.Do. The key
// hashes to a shard (xxhash with Config.Seed, mod Config.Shards), the
// shard map names the server, and the request is encoded in the meta
// protocol (package metacodec) into the write buffer of the connection to
// that server owned by loop L. At the end of the callback the proxy calls
// FlushLoop(L), which schedules one flush for the end of the loop's poll
// iteration (through Loops.Run): each connection's batch — the requests
// of every client the iteration served — leaves with one write. The
// server's replies arrive on loop L; each complete reply is parsed, paired
// with the oldest request waiting on the connection (memcached answers in
// order, and the encoder never asks for quiet replies), copied into the
// Op's Result, and the Op completes with Done, still on loop L. No lock
// and no goroutine hand-off is on this path.
//
// Goroutines. The pool owns three kinds, all ended by Close: the ticker
// (advances the pool clock and runs the timeout check on every loop
// through Loops.Run), one short-lived dialler per connection attempt
// (connects with DialTimeout, then Loops.Attach enrols the connection on
// its loop), and one prober per down server (connects and sends "version"
// every ProbeInterval until it answers, then runs the returning protocol). Everything a connection owns is
// touched only on its loop; routing reads an immutable snapshot of the
// shard map and servers with one atomic load; counters are per-loop
// atomics. Apart from the pool, a ServerTotals (the servers' item and
// memory stats for strata's stats command) owns one polling goroutine,
// started by Start and ended by Stop, that asks each server on a side
// connection of its own, never on the data plane's.
//
// Buffers. Do reads Op.Req only until it returns (the encoding copies the
// key and value) but keeps the Op until Done, as tiers.Op requires.
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
package memcached
