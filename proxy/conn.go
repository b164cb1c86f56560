package proxy

import (
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

	parser *protocol.Parser
	queue  []*slot // pending replies in request order; queue[0] is the head
	qbuf   []*slot // the backing array queue is reset to when it empties
	free   []*slot // reusable slots
	out    []byte  // replies formatted but not yet written
	// keys counts the tier operations of the slots in queue (a multi-get
	// has one per key): MaxInflight bounds them too, so a long multi-get,
	// which the parser hands out in pieces, has at most MaxInflight keys
	// in flight, like any other client's pipeline.
	keys int

	// Ordering of tier operations within the connection (see phaser):
	// inflight counts operations issued and not yet done by phase and key
	// bucket; held is a parsed request that must wait for operations of the
	// other phase on one of its keys.
	inflight [numPhases][phaseBuckets]uint32
	inPhase  [numPhases]int
	held     *slot

	inTraffic bool // inside OnTraffic: completions are flushed at its end
	dirty     bool // on loop.dirty, waiting for a flush
	paused    bool // stopped parsing at a bound; Wake resumes
	closing   bool // a reply asked to close; nothing more is parsed
	closed    bool
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
}

func (cn *conn) newSlot() *slot {
	if n := len(cn.free); n > 0 {
		s := cn.free[n-1]
		cn.free = cn.free[:n-1]
		return s
	}
	s := &slot{cn: cn}
	s.onDone = s.opDone
	return s
}

func (cn *conn) recycle(s *slot) {
	cn.keys -= len(s.ops)
	s.cmd.Reset()
	s.fixed = s.fixed[:0]
	s.pending = 0
	for i := range s.ops {
		s.ops[i].Req = tiers.Request{}
		s.ops[i].Ctx = nil
	}
	s.ops = s.ops[:0]
	if len(cn.free) < 64 {
		cn.free = append(cn.free, s)
	}
}

// traffic parses every complete request in the inbound buffer (at most
// peekMax bytes of it per callback), dispatches it, and writes the replies
// that are ready. It stops early at the
// in-flight and outbound bounds; the remaining bytes stay in gnet's buffer
// until Wake brings us back.
func (cn *conn) traffic() gnet.Action {
	if cn.closed {
		return gnet.Close
	}
	cn.inTraffic = true
	cn.paused = false
	cn.loop.now = nanotime()
	buf, _ := cn.c.Peek(min(cn.c.InboundBuffered(), cn.srv.peekMax))
	off := 0
	lim := &cn.srv.cfg
	for off < len(buf) && !cn.closing && cn.held == nil {
		if len(cn.queue) >= lim.MaxInflight || cn.keys >= lim.MaxInflight || cn.c.OutboundBuffered()+len(cn.out) > lim.MaxOutboundBytes {
			cn.paused = true
			break
		}
		s := cn.newSlot()
		n, err := cn.parser.Parse(buf[off:], &s.cmd)
		if err != nil {
			// The codec says memcached would drop this connection; send
			// whatever it wanted said first.
			cn.closing = true
			s.cmd.Close = true
			off = len(buf)
			cn.enqueue(s)
			cn.dispatch(s)
			break
		}
		if n == 0 {
			cn.recycle(s)
			break
		}
		off += n
		if s.cmd.Op == protocol.OpNone {
			cn.recycle(s)
			continue
		}
		cn.enqueue(s)
		if !cn.mayIssue(s) {
			cn.held = s // issued by opDone once the conflicting operations ended
			break
		}
		cn.dispatch(s)
	}
	if off > 0 {
		_, _ = cn.c.Discard(off) // gnet reads Discard(0) as "discard everything"
		if !cn.paused && !cn.closing && cn.held == nil && cn.c.InboundBuffered() > len(buf)-off {
			_ = cn.c.Wake(nil) // bytes past this callback's share wait: come back for them
		}
	}
	cn.inTraffic = false
	cn.flush()
	if cn.paused {
		cn.srv.pause(cn)
	}
	if cn.closed {
		return gnet.Close
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
	if srv.opts.sampler != nil {
		cn.loop.sample(srv.opts.sampler, op)
	}
	if s.phase != 0 {
		cn.inflight[s.phase-1][op.Tag]--
		cn.inPhase[s.phase-1]--
		if h := cn.held; h != nil && !cn.closed && cn.mayIssue(h) {
			cn.held = nil
			cn.dispatch(h)
			if !cn.inTraffic {
				_ = cn.c.Wake(nil) // parse what arrived behind the held request
			}
		}
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

// flush moves the ready prefix of the queue into out and writes it with
// one call. It closes the connection after a reply that asked for it.
func (cn *conn) flush() {
	cn.dirty = false
	closeNow := false
	for len(cn.queue) > 0 {
		s := cn.queue[0]
		if s.pending > 0 {
			break
		}
		cn.out = cn.srv.appendReply(cn.out, s)
		closeNow = s.cmd.Close
		cn.queue[0] = nil
		cn.queue = cn.queue[1:]
		if len(cn.queue) == 0 {
			cn.queue = cn.qbuf[:0] // reuse the backing array from its start
		}
		cn.recycle(s)
		if closeNow {
			break
		}
	}
	if len(cn.out) > 0 && !cn.closed {
		_, _ = cn.c.Write(cn.out)
		if cap(cn.out) > 1<<20 {
			cn.out = nil // do not pin a burst's buffer for the connection's life
		} else {
			cn.out = cn.out[:0]
		}
	}
	if closeNow {
		cn.closed = true
		if !cn.inTraffic {
			_ = cn.c.Close()
		}
		return
	}
	if cn.closing && len(cn.queue) == 0 && !cn.closed {
		// Draining: everything received was answered.
		cn.closed = true
		if !cn.inTraffic {
			_ = cn.c.Close()
		}
		return
	}
	if cn.paused && !cn.inTraffic && len(cn.queue) < cn.srv.cfg.MaxInflight/2 && cn.keys < cn.srv.cfg.MaxInflight/2 {
		cn.paused = false
		_ = cn.c.Wake(nil)
	}
}
