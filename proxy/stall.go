package proxy

import (
	"context"
	"math"

	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
)

// Stalls. When the process stops and resumes (internal/stall), the bytes
// that reached a connection meanwhile, and those it had buffered unparsed,
// may be requests whose clients have given up: a client's abandoned
// "set k v1" run now could land after another client's acknowledged
// "set k v2", through this strata or another. So the proxy treats them as
// held through the stall: a write parsed from them is answered
// "SERVER_ERROR request held through a process stall" and never reaches a
// tier; a read goes on. A request parsed before the stall and still
// waiting to be issued (conn.held) is refused the same way.
//
// Which bytes. Each loop notices a new stall generation at its first
// callback after it (one atomic load per callback, stall.Detector.Gen; it
// declares the stall itself when the heartbeat has not run yet) or when
// the watcher (watch.go) hands it the news. It then counts, for each of its
// connections, what gnet holds unparsed plus what the kernel holds unread
// (one ioctl per connection, once per stall): those bytes arrived before
// the loop looked, so they are stale (conn.stale), and requests that
// start within them are refused. A connection accepted within one
// threshold after the loop noticed is counted the same way when it opens:
// the kernel may have completed its handshake, and taken its bytes, while
// the process was stopped. The cost of this over-approximation is
// SERVER_ERROR for a write sent in the moments after the process woke,
// which its client may retry; a write that may be a ghost is never run.
//
// Each Op handed to a tier carries the generation its request was parsed
// under (tiers.Op.Stall, from slot.gen): a tier may park it (a lookup, a
// move's step) past a later stall, and where it leaves the process (a
// memcached pool, a region link) a write stamped before the generation
// then is refused the same way.
//
// A client that sends a write and closes without waiting for the reply,
// with no stall between, has its write executed, as memcached does: it
// did not give up on it. Writes held through a stall are refused whether
// or not their client is still connected, so no check of the peer is
// needed for them.

// begin starts a callback on l: it reads the clock for the callback and
// notices a stall.
func (l *loopState) begin(s *Server) {
	l.now = nanotime()
	if g := s.stall.Gen(l.now); g != l.stallGen {
		l.noticeStall(g)
	}
}

// noticeStall marks what every connection of the loop held at the moment
// the loop learned of stall generation g.
func (l *loopState) noticeStall(g uint64) {
	l.stallGen, l.stallSeen = g, l.now
	for cn := range l.conns {
		if !cn.closed {
			cn.markStale()
		}
	}
}

// openedNearStall counts a new connection's bytes as stale when it opens
// within one threshold of its loop noticing a stall.
func (cn *conn) openedNearStall() {
	l := cn.loop
	if l.stallSeen != 0 && l.now-l.stallSeen <= int64(cn.srv.stall.Threshold()) {
		cn.markStale()
	}
}

// markStale counts every byte the connection holds, in gnet's buffer and
// the kernel's, as stale. Both are bounded far below 2 GiB (the inbound
// bound and the socket's receive buffer); the clamp only keeps the
// conversion honest.
func (cn *conn) markStale() {
	cn.stale = int32(min(cn.c.InboundBuffered()+unreadBytes(cn.c.Fd()), math.MaxInt32))
}

// heldThroughStall reports whether a request of the slot parsed at off
// (within the callback's window) must be refused: it is a write and it
// began within the connection's stale bytes.
func (cn *conn) heldThroughStall(s *slot, off int) bool {
	return off < int(cn.stale) && s.isWrite()
}

// isWrite: the request changes what a later read returns. A touch (a get
// with a TTL) only moves an expiry, and goes on like a read.
func (s *slot) isWrite() bool {
	return len(s.cmd.Reqs) > 0 && s.cmd.Reqs[0].Kind != tiers.KindGet
}

// refuseHeld completes every operation of a slot refused for a stall
// without handing it to the tier.
func (cn *conn) refuseHeld(s *slot) {
	cn.srv.stats.stallRefused.Add(uint64(len(s.ops)))
	for i := range s.ops {
		op := &s.ops[i]
		op.Res.Status = tiers.StatusError
		op.Res.Err = stall.ErrHeld
		op.Done(op)
	}
}

// tickStall runs on the watcher: when the stall generation moved, every
// loop is told, so that a quiet loop learns of it at once rather than at
// its next callback (which would count that callback's fresh bytes as
// held through the stall).
func (s *Server) tickStall() {
	g := s.stall.Gen(nanotime())
	if g == s.tickGen.Load() {
		return
	}
	s.tickGen.Store(g)
	s.mu.Lock()
	loops := s.loops
	s.mu.Unlock()
	for _, l := range loops {
		_ = l.el.Execute(context.Background(), l.stallTask)
	}
}

// newStallTask binds a stall check to l once, so the watcher allocates
// nothing.
func newStallTask(s *Server, l *loopState) gnet.Runnable {
	return gnet.RunnableFunc(func(context.Context) error {
		l.begin(s)
		return nil
	})
}
