// Package link is the client side of region links: pipelined meta-protocol
// connections from this strata to the link listeners of the other
// regions' stratas, over which the locality tier forwards requests.
//
// Data path. The locality tier calls Send on event loop L with an Op, a
// peer and the token (linkproto) to carry. The request is spelt by
// metacodec with the token as its opaque flag, into the write buffer of
// the connection to that peer owned by loop L (one for forwarded requests,
// another for source reads and deletes); the proxy calls FlushLoop
// at the end of the loop's round, which writes each dirty connection's
// batch once. Replies arrive on loop L, are paired first in, first out
// (the peer answers in order and nothing asks for quiet mode), filled into
// the Op's Result with metacodec.Fill, and the Op completes with Done on
// loop L. A "SERVER_ERROR wrong_owner" reply completes it with
// linkproto.ErrWrongOwner; a connection that cannot be reached, a timeout
// or a full queue complete it with an error wrapping ErrUnreachable.
//
// Two connections per peer and loop, because a peer answers each in
// order: a forwarded request may wait at the peer for a source request
// the peer sends back to us, and if our own source requests to the peer
// queued behind such forwards, two regions each serving a migration's
// request could wait on each other until the timeout. Source requests
// are served from the peer's local tiers without waiting for any region,
// so their connection always drains.
//
// It does not go through the memcached pool: a peer strata is not a
// memcached server to mark down, flush on return or shard over.
//
// Failure. Each connection dials on first use. A failed dial
// or a lost connection fails what waited on it and starts a back-off
// (immediately once, then 10ms doubling up to Config.Timeout) during
// which requests to the peer fail at once, so an unreachable region costs
// a client no wait. The oldest request of a connection waiting longer
// than Config.Timeout fails, with everything behind it, and the
// connection is closed: the pairing of later replies is lost with it.
//
// Stalls (stall.go). A forwarded write (or a source delete) queued but
// not yet written when the process stopped is failed with stall.ErrHeld
// by the first flush round after it, never sent; reads still go out. A
// write a locality task parked across the stall (a lookup, a migration
// step) is failed by Send itself: its Op carries the stall generation its
// client request was read under (tiers.Op.Stall), older than the loop's.
//
// The receiving side has no rule of its own, and the token carries no
// stall generation, because nothing one would add is sound. After the
// rules above, a write of ours that reaches a peer after our stall was
// handed to our kernel before it. Under a stop of this process (SIGSTOP,
// a frozen container, a long pause) the kernel keeps running and sends
// it while our client still waits: an ordinary write in flight, which
// the owner runs in order like any other, and which can be delayed only
// as a memcached client's write can (a slow or lossy network, a peer not
// reading), a race between two connections that no stall creates. A
// pause of our whole machine (a VM paused, its kernel too) is the case
// left: bytes in our socket buffer at the pause are sent at resume,
// after our client gave up and perhaps after the owner acknowledged a
// newer write. A generation in the token would not refuse them: the
// kernel resends them at resume, before this process runs again, so on
// their connection they arrive ahead of any write stamped with the newer
// generation, and on another connection they almost always win the race
// too; and a generation restarts with the process, so the receiver would
// need an incarnation as well. What refuses them is a deadline in the
// sender's wall clock, checked against the receiver's: each write's token
// carries the moment this client answers it as failed (Timeout after it
// was queued) less Config.ClockSkew, and the owner's router refuses the
// write past it (tiers/locality, ErrLate). That is sound as far as the
// regions' clocks agree within ClockSkew (100ms by default), which is
// documented as an assumption (docs/pools.md).
//
// TLS. With Config.TLS set, each dial handshakes on the dialler's
// goroutine; the loop then owns the socket and processes its records
// (internal/tlsconn, through Loops.Attach), with no goroutine of the
// client's per connection. LoadTLS builds both sides of the
// links' mutual TLS from PEM files: the client's Config.TLS and the
// listener's (proxy.WithLinkTLS). CheckAddress and CheckListen are the
// rules of a peer's link address and of the listener's.
//
// Goroutines. The client owns a ticker (advances its millisecond clock
// and runs the timeout check on every loop through Loops.Run; it sleeps,
// the clock with it, while no loop holds a request or a backoff) and one
// short-lived dialler per connection attempt; Close ends both and fails
// what is queued. Everything a connection owns is touched only on its
// loop; Stats reads per-loop atomics.
//
// Buffers. Send reads Op.Req until it returns (the encoding copies key and
// value) and keeps the Op until Done. A reply's value is copied into
// Op.Res.Value, reusing its capacity.
package link
