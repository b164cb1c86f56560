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
// every ProbeInterval until it answers). Everything a connection owns is
// touched only on its loop; routing reads an immutable snapshot of the
// shard map and servers with one atomic load; counters are per-loop
// atomics.
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
// until a probe answers; then it is up again without a restart. Each
// connection bounds the requests written and awaiting replies, and their
// bytes; past a bound, requests wait in the connection's backlog, in
// order and not yet encoded, and are written as replies free room. They
// never fail for it: the issuer bounds what it has in flight (the proxy
// bounds each client connection), which bounds the backlog.
//
// Servers and shards. The first shard map is the rendezvous map of
// package shardmap: even in expectation, and minimal movement when the
// list changes (SetServers). SetShardMap installs maps computed elsewhere.
package memcached
