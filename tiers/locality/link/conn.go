package link

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/internal/ring"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/memcached/metacodec"
)

type connState uint8

const (
	stateIdle connState = iota
	stateDialing
	stateOpen
	stateBackoff
)

// maxKeptBuf caps the write buffer kept between batches.
const maxKeptBuf = 1 << 20

// pconn is one loop's connection to one peer. Only that loop touches it.
//
// Invariant: wbuf holds the encodings of the newest requests of q that
// were not written yet, in q's order.
type pconn struct {
	c    *Client
	ls   *loopState
	peer int

	state    connState
	cur      *handler // the connection (or dial) in use; events of others are stale
	conn     memcached.Conn
	wbuf     []byte
	spare    []byte
	tok      []byte // scratch for the opaque token
	q        ring.Queue[pend]
	dirty    bool
	failures int
	retryAt  int64 // client clock ms before which no dial starts
	rp       metacodec.Reply
	// unsentGen is ls.stallGen when the oldest request now in wbuf was
	// queued; a flush round under a newer generation holds their writes
	// (stall.go).
	unsentGen uint64
}

// handler receives one physical connection's events.
type handler struct{ pc *pconn }

var _ memcached.Handler = (*handler)(nil)

func (h *handler) OnOpen(c memcached.Conn) { h.pc.opened(h, c) }

func (h *handler) OnTraffic(c memcached.Conn) {
	if h.pc.cur != h {
		if b, _ := c.Peek(-1); len(b) > 0 {
			_, _ = c.Discard(len(b))
		}
		return
	}
	h.pc.traffic(c)
}

func (h *handler) OnClose(_ memcached.Conn, err error) {
	if h.pc.cur == h {
		if err == nil {
			err = errors.New("closed by peer")
		}
		h.pc.lost(err)
	}
}

func (pc *pconn) region() string { return pc.c.regions[pc.peer] }

// submit queues op and makes sure it will be written.
func (pc *pconn) submit(op *tiers.Op, tok linkproto.Token) {
	ctr := &pc.ls.ctr
	ctr.requests.Add(1)
	if pc.parkedThroughStall(op) {
		ctr.errors.Add(1)
		ctr.held.Add(1)
		complete(op, stall.ErrHeld)
		return
	}
	if pc.state == stateBackoff {
		if pc.c.clock.Load() < pc.retryAt {
			ctr.errors.Add(1)
			complete(op, fmt.Errorf("%w: peer %s (backing off)", ErrUnreachable, pc.region()))
			return
		}
		pc.state = stateIdle
	}
	if pc.q.Len() >= pc.c.cfg.MaxPending {
		ctr.errors.Add(1)
		complete(op, ErrBacklog)
		return
	}
	if tok.Epoch != 0 && op.Req.IsWrite() {
		// When this client answers the write as failed, less what the
		// peer's clock may lag (Config.ClockSkew).
		cfg := &pc.c.cfg
		tok.Deadline = cfg.Now().Add(cfg.Timeout - cfg.ClockSkew).UnixMilli()
	}
	pc.tok = linkproto.AppendToken(pc.tok[:0], tok)
	start := len(pc.wbuf)
	if start == 0 {
		pc.unsentGen = pc.ls.stallGen
	}
	var err error
	pc.wbuf, err = metacodec.AppendRequestOpaque(pc.wbuf, &op.Req, pc.tok)
	if err != nil {
		ctr.errors.Add(1)
		complete(op, fmt.Errorf("%w: %w", ErrRequest, err))
		return
	}
	ctr.bytesOut.Add(uint64(len(pc.wbuf) - start))
	pc.q.Push(pend{op: op, issued: pc.c.clock.Load(), size: int32(len(pc.wbuf) - start)})
	pc.ls.noteWaiting()
	switch pc.state {
	case stateOpen:
		pc.markDirty()
	case stateIdle:
		pc.dial()
	}
}

func (pc *pconn) markDirty() {
	if !pc.dirty {
		pc.dirty = true
		pc.ls.dirty = append(pc.ls.dirty, pc)
	}
}

func (pc *pconn) dial() {
	h := &handler{pc: pc}
	pc.cur = h
	pc.state = stateDialing
	if !pc.c.dial(pc, h) {
		pc.cur = nil
		pc.state = stateIdle
		pc.failAll(ErrClosed)
	}
}

func (pc *pconn) opened(h *handler, c memcached.Conn) {
	if pc.cur != h || pc.state != stateDialing {
		_ = c.Close() // a dial given up on
		return
	}
	pc.conn = c
	pc.state = stateOpen
	pc.failures = 0
	if len(pc.wbuf) > 0 {
		pc.markDirty() // written by the FlushLoop that ends this callback
	}
}

func (pc *pconn) dialFailed(h *handler, err error) {
	if pc.cur != h || pc.state != stateDialing {
		return
	}
	pc.cur = nil
	pc.backoff()
	pc.failAll(fmt.Errorf("%w: peer %s: %v", ErrUnreachable, pc.region(), err))
}

// lost handles the close of the current connection by the peer or the
// network.
func (pc *pconn) lost(err error) {
	pc.cur, pc.conn = nil, nil
	if pc.q.Len() == 0 {
		pc.state = stateIdle
		pc.wbuf = pc.wbuf[:0]
		return
	}
	pc.backoff()
	pc.failAll(fmt.Errorf("%w: peer %s: connection lost: %v", ErrUnreachable, pc.region(), err))
}

// reset drops the connection (a timeout, a protocol error, Close) and
// fails everything queued with err.
func (pc *pconn) reset(err error) {
	c := pc.conn
	pc.cur, pc.conn = nil, nil
	if c != nil {
		_ = c.Close() // its OnClose arrives on a stale handler
	}
	if pc.state != stateIdle || pc.q.Len() > 0 {
		pc.backoff()
	}
	pc.failAll(err)
}

// backoff spaces reconnects: the first retry is immediate, then 10ms,
// 20ms, ... up to the timeout.
func (pc *pconn) backoff() {
	pc.failures++
	pc.state = stateBackoff
	pc.retryAt = pc.c.clock.Load() + backoffDelay(pc.failures, pc.c.cfg.Timeout).Milliseconds()
}

func backoffDelay(failures int, limit time.Duration) time.Duration {
	if failures <= 1 {
		return 0
	}
	return min(10*time.Millisecond<<min(failures-2, 20), limit)
}

// failAll fails every queued request with err. Done callbacks may submit
// again; those queue afresh.
func (pc *pconn) failAll(err error) {
	pc.wbuf = pc.wbuf[:0]
	if pc.q.Len() == 0 {
		return
	}
	for _, e := range pc.q.TakeAll() {
		pc.ls.ctr.errors.Add(1)
		complete(e.op, err)
	}
}

// flush writes the batch queued since the last flush.
func (pc *pconn) flush() {
	pc.dirty = false
	pc.holdIfStalled()
	if pc.state != stateOpen || len(pc.wbuf) == 0 {
		return
	}
	c, buf := pc.conn, pc.wbuf
	pc.wbuf, pc.spare = pc.spare[:0], nil
	_, err := c.Write(buf)
	pc.ls.ctr.writes.Add(1)
	if cap(buf) <= maxKeptBuf {
		pc.spare = buf[:0]
	}
	if err != nil && pc.conn == c {
		pc.reset(fmt.Errorf("%w: peer %s: write: %v", ErrUnreachable, pc.region(), err))
	}
}

// traffic parses every complete reply and completes its request, oldest
// first.
func (pc *pconn) traffic(c memcached.Conn) {
	buf, _ := c.Peek(-1)
	h := pc.cur
	off := 0
	for off < len(buf) {
		if pc.q.Len() == 0 {
			pc.reset(fmt.Errorf("%w: peer %s: a reply without a request", ErrUnreachable, pc.region()))
			return
		}
		n, err := metacodec.ParseReply(buf[off:], pc.c.cfg.MaxValue, &pc.rp)
		if err != nil {
			pc.reset(fmt.Errorf("%w: peer %s: %v", ErrUnreachable, pc.region(), err))
			return
		}
		if n == 0 {
			break
		}
		off += n
		pc.ls.ctr.bytesIn.Add(uint64(n))
		e := pc.q.Pop()
		pc.deliver(e.op)
		if pc.cur != h {
			return // a Done callback's submit reset the connection
		}
	}
	if off > 0 {
		_, _ = c.Discard(off)
	}
}

// deliver completes op with the reply in pc.rp.
func (pc *pconn) deliver(op *tiers.Op) {
	err := metacodec.Fill(&op.Res, &op.Req, &pc.rp)
	if err == nil {
		if op.Done != nil {
			op.Done(op)
		}
		return
	}
	pc.ls.ctr.errors.Add(1)
	op.Res.Err = errFromReply(pc.region(), err)
	if errors.Is(op.Res.Err, linkproto.ErrWrongOwner) {
		pc.ls.ctr.wrongOwner.Add(1)
	}
	var re *metacodec.ReplyError
	desync := errors.Is(err, metacodec.ErrUnexpected) || (errors.As(err, &re) && re.Code != metacodec.CodeServerError)
	h := pc.cur
	if op.Done != nil {
		op.Done(op)
	}
	if desync && pc.cur == h && h != nil {
		// Our idea of the stream is wrong: later replies may belong to
		// other requests.
		pc.reset(fmt.Errorf("%w: peer %s: out of step: %v", ErrUnreachable, pc.region(), err))
	}
}
