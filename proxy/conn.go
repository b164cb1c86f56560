package proxy

import (
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers"
)

// conn is the state of one client connection. It lives on one event loop
// and is touched only from that loop's goroutine: no field needs a lock.
//
// Requests are parsed in arrival order and each gets a slot at the tail of
// queue. A slot is ready when all its tier operations completed; replies
// leave from the head of the queue only, so they keep request order even
// when a later request completes first.
type conn struct {
	srv  *Server
	c    gnet.Conn
	loop *loopState
	id   uint64 // the connection's number in order of acceptance, for Op.Conn

	// work is what the connection needs only while it has requests
	// (slots.go): borrowed from the loop when a request arrives (unpark),
	// given back once every request was answered (park). Between
	// requests it points to parked, which reads as nothing in flight.
	*work

	// fd and lastCmd are what stats conns shows of the connection, with
	// c's remote address, from whichever loop answers it: fd never
	// changes, lastCmd (the nanotime of the last request parsed) is atomic.
	lastCmd atomic.Int64
	fd      int32

	// stale counts the bytes at the head of the inbound buffer that the
	// connection held through a process stall (stall.go); a write that
	// starts within them is refused. At most the inbound bound.
	stale int32

	// replyEst is the reply size assumed for a request still waiting for
	// the tier (pause.go). It starts at a quarter of the outbound bound, so
	// a new connection has at most 4 requests at a pool before their sizes
	// are known; it falls as small replies come back.
	replyEst int
	produced int // reply bytes formatted over the connection's life (wraps harmlessly)

	// authFails counts the connection's failed authentication attempts
	// (auth.go): past auth.Config.SlowAfter their replies are held.
	authFails int32

	mode       protocol.Mode
	link       bool // accepted on the region-link listener (link.go)
	inTraffic  bool // inside OnTraffic: completions are flushed at its end
	dirty      bool // on loop.dirty, waiting for a flush
	paused     bool // stopped parsing at a bound (pause.go)
	listed     bool // on loop.paused
	closing    bool // no more requests are parsed; close once answered
	draining   bool // the server drains: close once between requests (betweenRequests)
	closeAfter bool // a reply asked to close the connection once written
	closed     bool
}

// slot is one request's place in the reply queue.
type slot struct {
	cn      *conn
	cmd     protocol.Command
	ops     []tiers.Op
	res     []tiers.Result
	pending int    // tier operations not yet done
	start   int64  // when the request was dispatched, for the latency histogram
	phase   uint8  // ordering phase of its operations, 0 for none
	fixed   []byte // reply decided by the proxy itself (stats, version, ...)
	onDone  func(*tiers.Op)
	gen     uint64 // the loop's stall generation when the request was parsed
	refuse  bool   // a write held through a stall: answered, never issued (stall.go)
}

// traffic parses the complete requests in the inbound buffer (looking at
// most at peekMax bytes of it), dispatches them, and writes the replies
// that are ready. It stops at the bounds
// (pause.go) and after trafficBudget bytes; the rest stays in gnet's buffer
// until a Wake brings us back. A paused connection is not parsed at all.
func (cn *conn) traffic() gnet.Action {
	if cn.closed {
		return gnet.Close
	}
	if cn.paused {
		if cn.c.InboundBuffered() > cn.srv.cfg.maxInbound() {
			cn.closed = true // sending without reading, past any use
			return gnet.Close
		}
		return gnet.None
	}
	cn.inTraffic = true
	cn.loop.begin(cn.srv)
	total := cn.c.InboundBuffered()
	// Peek a window, not everything: when gnet's ring buffer has wrapped,
	// Peek copies, and a backlog would be copied on every callback.
	buf, _ := cn.c.Peek(min(total, trafficBudget))
	off := 0
	more := false
	produced := cn.produced
	if cn.work == &parked && len(buf) > 0 {
		cn.unpark()
	}
	for off < len(buf) && !cn.closing && !cn.closeAfter && cn.held == nil {
		if cn.overBound() {
			cn.pause()
			break
		}
		if off >= trafficBudget || cn.produced-produced >= replyBudget {
			more = true // the loop's other connections go first
			break
		}
		s := cn.newSlot()
		s.gen = cn.loop.stallGen
		start := off
		n, err := cn.parser.Parse(buf[off:], &s.cmd)
		if cn.link && (err != nil || n > 0) {
			// Marked before anything reads the requests: the marks choose
			// the phase mayIssue orders by (a source request is not
			// ordered like a client's write), and the tier routes by them.
			markLink(&s.cmd)
		}
		if err != nil {
			// The codec says memcached would drop this connection; send
			// whatever it wanted said first.
			cn.closing = true
			s.cmd.Close = true
			off = len(buf)
			s.refuse = cn.heldThroughStall(s, start)
			cn.enqueue(s)
			cn.dispatch(s)
			break
		}
		if n == 0 {
			cn.recycle(s)
			if whole := min(total, cn.srv.peekMax); len(buf) < whole {
				// The request runs past the window: look at all of it, up
				// to the longest request the parser needs whole (a longer
				// get line is served in pieces from a window of it).
				buf, _ = cn.c.Peek(whole)
				continue
			}
			break
		}
		off += n
		if s.cmd.Op == protocol.OpNone {
			cn.recycle(s)
			continue
		}
		s.refuse = cn.heldThroughStall(s, start)
		cn.enqueue(s)
		if !cn.mayIssue(s) {
			cn.held = s // issued by opDone once the conflicting operations ended
			break
		}
		cn.dispatch(s)
		// Format what completed now, so the bound sees its true size.
		cn.collect()
	}
	if off > 0 {
		cn.stale = int32(max(int(cn.stale)-off, 0))
		cn.countRead(off)
		_, _ = cn.c.Discard(off) // gnet reads Discard(0) as "discard everything"
		if !cn.paused && !cn.closing && cn.held == nil && cn.c.InboundBuffered() > len(buf)-off {
			_ = cn.c.Wake(nil) // bytes past this callback's share wait: come back for them
		}
	}
	cn.inTraffic = false
	cn.flush()
	if cn.closed {
		return gnet.Close
	}
	if more && !cn.paused {
		_ = cn.c.Wake(nil)
	}
	return gnet.None
}

func (cn *conn) enqueue(s *slot) {
	cn.queue = append(cn.queue, s)
	if cap(cn.queue) > cap(cn.qbuf) {
		cn.qbuf = cn.queue[:0]
	}
}

// opDone is the tiers.Op completion callback of every op of the slot.
func (s *slot) opDone(op *tiers.Op) {
	cn := s.cn
	srv := cn.srv
	srv.stats.loop(cn.loop.idx).observe(op, cn.loop.now-s.start)
	srv.observeDetail(op)
	if srv.opts.sampler != nil {
		cn.loop.sample(srv.opts.sampler, op)
	}
	if s.phase != 0 {
		cn.inflight[s.phase-1][op.Tag]--
		cn.inPhase[s.phase-1]--
		if h := cn.held; h != nil && !cn.closed && cn.mayIssue(h) {
			cn.held = nil
			if h.gen != cn.loop.stallGen && h.isWrite() {
				h.refuse = true // parsed before a stall, waited through it
			}
			cn.dispatch(h)
			if !cn.inTraffic {
				_ = cn.c.Wake(nil) // parse what arrived behind the held request
			}
		}
		cn.releaseCounts()
	}
	s.pending--
	if s.pending > 0 {
		return
	}
	if cn.inTraffic || cn.dirty {
		return
	}
	cn.dirty = true
	cn.loop.dirty = append(cn.loop.dirty, cn)
}

// collect moves the ready prefix of the queue into out, and hands out to
// gnet once it reaches writeChunk. After a reply that asks to close,
// nothing more is collected.
func (cn *conn) collect() {
	for len(cn.queue) > 0 && !cn.closeAfter {
		s := cn.queue[0]
		if s.pending > 0 {
			break
		}
		n := len(cn.out)
		cn.out = cn.srv.appendReply(cn.out, s)
		cn.noteReply(len(cn.out) - n)
		cn.produced += len(cn.out) - n
		cn.closeAfter = s.cmd.Close
		cn.queue[0] = nil
		cn.queue = cn.queue[1:]
		if len(cn.queue) == 0 {
			cn.queue = cn.qbuf[:0] // reuse the backing array from its start
		}
		cn.recycle(s)
	}
	if len(cn.out) >= writeChunk {
		cn.write()
	}
}

// write hands the formatted replies to gnet: in one call when they are
// small, the usual case; in writeChunk pieces when large, because what the
// socket does not take gnet copies into a pooled buffer rounded up to a
// power of two, which for one large piece can double its memory.
func (cn *conn) write() {
	if len(cn.out) == 0 || cn.closed {
		return
	}
	cn.countWritten(len(cn.out))
	for p := cn.out; len(p) > 0; {
		n := min(len(p), writeChunk)
		_, _ = cn.c.Write(p[:n])
		p = p[n:]
	}
	if cap(cn.out) > 4*writeChunk {
		cn.out = nil // do not pin a large value's buffer for the connection's life
	} else {
		cn.out = cn.out[:0]
	}
}

// flush writes the ready prefix of the queue with one call. It closes the
// connection after a reply that asked for it, and resumes a connection
// paused at a bound that its replies brought back under.
func (cn *conn) flush() {
	cn.dirty = false
	cn.collect()
	cn.write()
	if cn.closed {
		return
	}
	if cn.closeAfter || (cn.closing && len(cn.queue) == 0) || (cn.draining && cn.betweenRequests()) {
		// A reply asked to close, or a protocol error or the drain:
		// everything received was answered.
		cn.closed = true
		if !cn.inTraffic {
			_ = cn.c.Close()
		}
		return
	}
	if cn.paused && !cn.inTraffic && cn.underLowWater() {
		cn.resume()
	}
	cn.park()
}

// betweenRequests reports whether closing the connection loses nothing its
// client sent: every request received was answered and its reply left
// gnet's buffers, and no byte of another waits, in gnet's inbound buffer
// or the kernel's. A request sent after that meets a closed connection,
// which a client may retry on a new one.
func (cn *conn) betweenRequests() bool {
	return len(cn.queue) == 0 && cn.held == nil && len(cn.out) == 0 &&
		cn.c.InboundBuffered() == 0 && cn.c.OutboundBuffered() == 0 &&
		unreadBytes(cn.c.Fd()) == 0
}
