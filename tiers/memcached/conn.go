package memcached

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/internal/ring"
	"github.com/strata-cache/strata/tiers/memcached/metacodec"
)

// connState is the life cycle of one backend connection slot.
type connState uint8

const (
	stateIdle    connState = iota // no connection; the next request dials
	stateDialing                  // a dial is under way; requests queue
	stateOpen                     // connected; requests are written by FlushLoop
	stateBackoff                  // a connect or connection failed; requests fail until retryAt
)

// maxKeptBuf caps the write buffer a connection keeps between batches, so
// a burst does not pin memory for the connection's life.
const maxKeptBuf = 1 << 20

// bconn is the pool's connection to one server on one event loop. Only
// that loop's goroutine touches it, except ctr, which Stats reads.
//
// Invariant: wbuf holds exactly the encodings of the newest requests of q
// that have not been written, in q's order; inflight is the encoded size
// of all of q.
type bconn struct {
	p   *Pool
	srv *server
	ls  *loopState

	state    connState
	cur      *link // the connection (or dial) in use; events of any other link are stale
	c        Conn  // set while open
	wbuf     []byte
	spareBuf []byte
	q        ring.Queue[pend]
	backlog  ring.Queue[pend] // requests that found q at a bound, not yet encoded, in submit order
	inflight int
	dirty    bool // on ls.dirty
	retired  bool // its server left the pool: close once q drains

	// greeting is set from OnOpen until the server answers the no-op
	// written first on every connection; nothing else is written before.
	// memcached's listener accepts a connection and a worker thread
	// registers it later; only registered connections are listed in
	// "stats conns". Waiting for an answer means every connection that
	// ever carried a request of ours was listed before the request arrived
	// and stays listed until it has run: the returning protocol's drain
	// rests on it.
	greeting bool

	failures int    // connects failed or connections lost in a row, for backoff
	retryAt  int64  // pool clock ms before which no dial starts
	epoch    uint64 // srv.upEpoch when the backoff began
	opened   bool   // has connected at least once
	rp       metacodec.Reply

	// busy is set while the slot may hold a connection or a dial, and
	// fenced is the down spell (server.downGen) for which this loop last
	// dropped both; the prober reads them to know every loop has let go
	// of the connections from before the server went down (returning.go).
	busy   atomic.Bool
	fenced atomic.Uint64

	// unsentGen is ls.stallGen when the oldest request now in wbuf or the
	// backlog was queued; a flush round under a newer generation holds
	// their writes (stall.go).
	unsentGen uint64

	ctr counters
}

// counters are one connection's share of its server's counters. Each
// event loop counts into its own, so counting shares no cache line.
type counters struct {
	requests, hits, misses, errors atomic.Uint64
	timeouts, reconnects, writes   atomic.Uint64
	waits, downRejects, held       atomic.Uint64
	_                              [64]byte
}

// link is one physical connection (or dial attempt) of a bconn, and its
// Handler. A bconn replaces its link on every reconnect, so events that
// arrive for an old connection are recognised and ignored.
type link struct {
	bc *bconn
	// local is the connection's local address, as the server lists it in
	// "stats conns". Written by the dialler before Attach, read on the
	// loop after OnOpen.
	local string
}

func (l *link) OnOpen(c Conn) { l.bc.onOpen(l, c) }

func (l *link) OnTraffic(c Conn) {
	if l.bc.cur != l {
		if b, _ := c.Peek(-1); len(b) > 0 {
			_, _ = c.Discard(len(b))
		}
		return
	}
	l.bc.onTraffic(c)
}

func (l *link) OnClose(_ Conn, err error) {
	if l.bc.cur == l {
		l.bc.onLost(err)
	}
}

// submit queues a request (op, or one server's part of a flush_all) and
// makes sure it will be written. A request that finds the connection at a
// bound waits in the backlog instead of failing: a client's multi-get of
// thousands of keys then goes out in pieces as replies free room, and
// other clients' requests queue behind it rather than fail. shard is op's
// shard, -1 for flush_all.
func (bc *bconn) submit(op *tiers.Op, fan *fanout, shard int32) {
	p := bc.p
	bc.ctr.requests.Add(1)
	if bc.parkedThroughStall(op, fan) {
		bc.ctr.held.Add(1)
		bc.reject(op, fan, stall.ErrHeld)
		return
	}
	if bc.state == stateBackoff {
		if p.clock.Load() < bc.retryAt && bc.epoch == bc.srv.upEpoch.Load() {
			bc.reject(op, fan, bc.srv.errUnreachable)
			return
		}
		bc.state = stateIdle
	}
	if bc.backlog.Len() > 0 || bc.q.Len() >= p.cfg.MaxPendingPerConn {
		bc.wait(op, fan, shard) // behind the requests already waiting, in order
		return
	}
	switch bc.encode(op, fan, shard) {
	case encRejected:
		return
	case encNoRoom:
		bc.wait(op, fan, shard)
		return
	}
	switch bc.state {
	case stateOpen:
		bc.markDirty()
	case stateIdle:
		bc.dial()
	}
}

// encoded is what encode did with a request.
type encoded uint8

const (
	encQueued   encoded = iota // written into wbuf and queued in q
	encNoRoom                  // over MaxBufferedBytesPerConn: nothing changed
	encRejected                // not expressible to memcached: failed
)

// encode appends the request to wbuf and queues it in q, unless its bytes
// would pass MaxBufferedBytesPerConn while other requests are queued (one
// request alone always fits, however large).
func (bc *bconn) encode(op *tiers.Op, fan *fanout, shard int32) encoded {
	p := bc.p
	bc.noteUnsent()
	start := len(bc.wbuf)
	var err error
	if fan != nil {
		bc.wbuf = metacodec.AppendFlush(bc.wbuf, fan.op.Req.TTL)
	} else {
		bc.wbuf, err = metacodec.AppendRequest(bc.wbuf, &op.Req)
	}
	if err != nil {
		bc.wbuf = bc.wbuf[:start]
		bc.reject(op, fan, &RequestError{Err: err})
		return encRejected
	}
	size := len(bc.wbuf) - start
	if bc.q.Len() > 0 && bc.inflight+size > p.cfg.MaxBufferedBytesPerConn {
		bc.wbuf = bc.wbuf[:start]
		return encNoRoom
	}
	bc.inflight += size
	bc.q.Push(pend{op: op, fan: fan, issued: p.clock.Load(), size: int32(size), shard: shard})
	bc.ls.noteWaiting()
	return encQueued
}

// wait puts a request in the backlog. Invariant: the backlog is empty
// whenever q is (a request waits only behind queued ones), so the timeout
// of q's oldest request also covers a server that stops answering.
func (bc *bconn) wait(op *tiers.Op, fan *fanout, shard int32) {
	bc.ctr.waits.Add(1)
	bc.noteUnsent()
	bc.backlog.Push(pend{op: op, fan: fan, shard: shard})
}

// admit moves requests from the backlog into q, oldest first, while the
// bounds allow. It runs after replies emptied part of q.
func (bc *bconn) admit() {
	moved := false
	for bc.backlog.Len() > 0 && bc.q.Len() < bc.p.cfg.MaxPendingPerConn {
		e := bc.backlog.Front()
		op, fan, shard := e.op, e.fan, e.shard
		res := bc.encode(op, fan, shard)
		if res == encNoRoom {
			break
		}
		bc.backlog.Pop()
		moved = moved || res == encQueued
	}
	if moved && bc.state == stateOpen {
		bc.markDirty()
	}
}

func (bc *bconn) markDirty() {
	if !bc.dirty {
		bc.dirty = true
		bc.ls.dirty = append(bc.ls.dirty, bc)
	}
}

// reject fails a request that never reached the queue. The server is up
// (Do and flushAll checked), so a write refused here is a skipped write.
func (bc *bconn) reject(op *tiers.Op, fan *fanout, err error) {
	bc.ctr.errors.Add(1)
	var bad *RequestError
	if !errors.As(err, &bad) { // a request the server could never take changes nothing
		bc.taintIfSkipped(&pend{op: op, fan: fan})
	}
	if fan != nil {
		fan.done(err)
		return
	}
	complete(op, tiers.StatusError, err)
}

// dial starts connecting on a goroutine the pool owns; the loop learns the
// outcome through the link's OnOpen, or through Run on failure.
func (bc *bconn) dial() {
	p := bc.p
	l := &link{bc: bc}
	bc.cur = l
	bc.state = stateDialing
	if bc.opened || bc.failures > 0 {
		bc.ctr.reconnects.Add(1)
	}
	// busy before the state check, the prober's order reversed: either
	// the prober sees this slot busy and waits for its fence, or this
	// dial sees the server not up and gives up.
	bc.busy.Store(true)
	if healthState(bc.srv.state.Load()) != stateUp {
		bc.cur = nil
		bc.state = stateIdle
		bc.failAll(bc.srv.errDown)
		return
	}
	loop, addr := bc.ls.idx, bc.srv.addr
	started := p.goroutine(func() {
		err := p.connect(loop, addr, l)
		if err != nil {
			p.loops.Run(loop, func() { bc.onDialFailed(l, err) })
		}
	})
	if !started {
		bc.cur = nil
		bc.state = stateIdle
		bc.failAll(ErrClosed)
	}
}

// connect dials addr and hands the connection to the event loop.
func (p *Pool) connect(loop int, addr string, l *link) error {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	defer cancel()
	nc, err := p.dialLoop(ctx, addr)
	if err != nil {
		return err
	}
	l.local = nc.LocalAddr().String()
	return p.loops.Attach(ctx, loop, nc, l)
}

func (bc *bconn) onOpen(l *link, c Conn) {
	if bc.cur != l || bc.state != stateDialing {
		_ = c.Close() // a dial this slot gave up on
		return
	}
	if healthState(bc.srv.state.Load()) != stateUp {
		// Marked down while dialling: write nothing, so that every
		// connection we ever wrote on was open before the mark-down
		// (the returning protocol's argument rests on it).
		bc.cur = nil
		bc.state = stateIdle
		_ = c.Close()
		bc.failAll(bc.srv.errDown)
		return
	}
	bc.c = c
	bc.state = stateOpen
	bc.opened = true
	bc.failures = 0
	bc.greeting = true
	// The queued requests wait in wbuf; onTraffic schedules their write
	// when the greeting is answered. A failed Write closes c, and OnClose
	// has run when it returns.
	_, _ = c.Write(metacodec.AppendNoop(nil))
}

func (bc *bconn) onDialFailed(l *link, err error) {
	if bc.cur != l || bc.state != stateDialing {
		return
	}
	bc.cur = nil
	bc.startBackoff()
	bc.taintIfWrites(false)
	bc.failAll(&BackendError{Addr: bc.srv.addr, Err: fmt.Errorf("%w: %v", ErrUnreachable, err)})
	bc.srv.failure(bc.p)
}

// onLost handles the close of the current connection by the server or the
// network.
func (bc *bconn) onLost(err error) {
	bc.suspect()
	sent := !bc.greeting
	bc.greeting = false
	bc.cur, bc.c = nil, nil
	if bc.q.Len() == 0 {
		bc.state = stateIdle
		bc.wbuf = bc.wbuf[:0]
		return
	}
	if err == nil {
		err = errors.New("EOF")
	}
	bc.startBackoff()
	bc.taintIfWrites(sent)
	bc.failAll(&BackendError{Addr: bc.srv.addr, Err: fmt.Errorf("%w: %v", ErrConnLost, err)})
	bc.srv.failure(bc.p)
}

// reset drops the current connection because its replies can no longer be
// trusted (a timeout or a protocol error) and fails everything queued.
func (bc *bconn) reset(err error) {
	bc.suspect()
	sent := !bc.greeting
	bc.greeting = false
	c := bc.c
	bc.cur, bc.c = nil, nil
	if c != nil {
		_ = c.Close() // its OnClose arrives on a stale link
	}
	bc.startBackoff()
	bc.taintIfWrites(sent)
	bc.failAll(err)
	bc.srv.failure(bc.p)
}

// startBackoff spaces reconnects: the first retry is immediate, then
// 10ms, 20ms, ... up to ProbeInterval. A server coming back up (upEpoch)
// ends the wait early.
func (bc *bconn) startBackoff() {
	bc.failures++
	bc.state = stateBackoff
	bc.retryAt = bc.p.clock.Load() + backoffDelay(bc.failures, bc.p.cfg.ProbeInterval).Milliseconds()
	bc.epoch = bc.srv.upEpoch.Load()
}

// backoffDelay is the wait before reconnect attempt number `failures`.
func backoffDelay(failures int, limit time.Duration) time.Duration {
	if failures <= 1 {
		return 0
	}
	d := 10 * time.Millisecond << min(failures-2, 20)
	return min(d, limit)
}

// failAll fails every queued request, then every waiting one, with err.
// Done callbacks may issue new requests on this connection; they queue
// afresh.
func (bc *bconn) failAll(err error) {
	if bc.q.Len() == 0 && bc.backlog.Len() == 0 {
		bc.wbuf = bc.wbuf[:0]
		bc.inflight = 0
		return
	}
	entries := append(bc.q.TakeAll(), bc.backlog.TakeAll()...)
	bc.wbuf = bc.wbuf[:0]
	bc.inflight = 0
	timeout := errors.Is(err, ErrTimeout)
	for _, e := range entries {
		bc.ctr.errors.Add(1)
		if timeout {
			bc.ctr.timeouts.Add(1)
		}
		if e.fan != nil {
			e.fan.done(err)
			continue
		}
		complete(e.op, tiers.StatusError, err)
	}
}

// flush writes the batch of requests issued since the last flush.
func (bc *bconn) flush() {
	bc.dirty = false
	bc.holdIfStalled()
	if bc.state != stateOpen || bc.greeting || len(bc.wbuf) == 0 {
		return
	}
	c, buf := bc.c, bc.wbuf
	// Requests issued while Write runs (a failure's Done callbacks) go to
	// the other buffer.
	bc.wbuf, bc.spareBuf = bc.spareBuf[:0], nil
	_, err := c.Write(buf)
	bc.ctr.writes.Add(1)
	if cap(buf) <= maxKeptBuf {
		bc.spareBuf = buf[:0]
	}
	if err != nil && bc.c == c {
		// Conns that do not close themselves on a write error.
		bc.reset(&BackendError{Addr: bc.srv.addr, Err: fmt.Errorf("%w: %v", ErrConnLost, err)})
	}
}

// onTraffic parses every complete reply in the inbound buffer and
// completes its request, oldest first.
func (bc *bconn) onTraffic(c Conn) {
	buf, _ := c.Peek(-1)
	l := bc.cur
	off := 0
	for off < len(buf) {
		if bc.greeting {
			n, err := metacodec.ParseReply(buf[off:], 0, &bc.rp)
			if err == nil && n > 0 && bc.rp.Code != metacodec.CodeMN {
				err = fmt.Errorf("greeting answered %s", bc.rp.Code)
			}
			if err != nil {
				bc.reset(&BackendError{Addr: bc.srv.addr, Err: fmt.Errorf("%w: %v", ErrProtocol, err)})
				return
			}
			if n == 0 {
				break
			}
			off += n
			bc.greeting = false
			bc.srv.success()
			if len(bc.wbuf) > 0 {
				bc.markDirty() // written by the FlushLoop that ends this callback
			}
			continue
		}
		if bc.q.Len() == 0 {
			bc.reset(&BackendError{Addr: bc.srv.addr, Err: fmt.Errorf("%w: reply without a request", ErrProtocol)})
			return
		}
		n, err := metacodec.ParseReply(buf[off:], bc.p.cfg.MaxItemSize, &bc.rp)
		if err != nil {
			bc.reset(&BackendError{Addr: bc.srv.addr, Err: fmt.Errorf("%w: %v", ErrProtocol, err)})
			return
		}
		if n == 0 {
			break
		}
		off += n
		e := bc.q.Pop()
		bc.inflight -= int(e.size)
		bc.srv.success()
		bc.deliver(e)
		if bc.cur != l {
			return // deliver reset the connection
		}
	}
	if off > 0 {
		_, _ = c.Discard(off)
	}
	bc.admit()
	if bc.retired && bc.q.Len() == 0 {
		bc.closeConn()
	}
}

// deliver completes one request with the reply in bc.rp.
func (bc *bconn) deliver(e pend) {
	if e.fan != nil {
		if bc.rp.Code == metacodec.CodeOK {
			e.fan.done(nil)
			return
		}
		bc.ctr.errors.Add(1)
		bc.taintIfSkipped(&e)
		e.fan.done(&BackendError{Addr: bc.srv.addr, Err: fmt.Errorf("flush_all: %w", replyErr(&bc.rp))})
		return
	}
	op := e.op
	err := metacodec.Fill(&op.Res, &op.Req, &bc.rp)
	if err == nil {
		bc.ls.countReply(e.shard, len(op.Res.Value))
		switch op.Res.Status {
		case tiers.StatusHit:
			bc.ctr.hits.Add(1)
		case tiers.StatusMiss:
			bc.ctr.misses.Add(1)
		}
		if op.Done != nil {
			op.Done(op)
		}
		return
	}
	bc.ctr.errors.Add(1)
	// An unexpected reply, ERROR or an unknown CLIENT_ERROR means our
	// idea of the stream is wrong: later replies may belong to other
	// requests.
	var re *metacodec.ReplyError
	desync := errors.Is(err, metacodec.ErrUnexpected) ||
		(errors.As(err, &re) && re.Code != metacodec.CodeServerError)
	berr := &BackendError{Addr: bc.srv.addr, Err: fmt.Errorf("replied %w", err)}
	if desync {
		berr.Err = fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	bc.taintIfSkipped(&e)
	op.Res.Err = berr
	if op.Done != nil {
		op.Done(op)
	}
	if desync && bc.cur != nil {
		bc.reset(berr)
	}
}

func replyErr(rp *metacodec.Reply) error {
	return &metacodec.ReplyError{Code: rp.Code, Text: string(rp.Data)}
}

// checkTimeout fails the queue when its oldest request waited too long.
// Requests are answered in order, so the oldest is the first to expire,
// and once one is lost the pairing of the later replies is lost too.
func (bc *bconn) checkTimeout(now, limit int64) {
	if bc.q.Len() == 0 || !expired(bc.q.Front().issued, now, limit) {
		return
	}
	err := &BackendError{Addr: bc.srv.addr, Err: ErrTimeout}
	if bc.state == stateDialing {
		// Nothing was written: fail the queue and let the dial finish.
		bc.taintIfWrites(false)
		bc.failAll(err)
		return
	}
	bc.reset(err)
}

// retire runs on the loop when the server leaves the pool.
func (bc *bconn) retire() {
	bc.retired = true
	if bc.q.Len() == 0 && bc.state != stateDialing {
		bc.closeConn()
		return
	}
	bc.ls.draining = append(bc.ls.draining, bc)
	bc.ls.noteWaiting() // its server left the route, which no longer shows it
}

// closeConn closes an idle connection without failing anything.
func (bc *bconn) closeConn() {
	c := bc.c
	bc.cur, bc.c = nil, nil
	bc.greeting = false
	bc.state = stateIdle
	if c != nil {
		_ = c.Close()
	}
}

// abort fails everything and closes, for Close.
func (bc *bconn) abort(err error) {
	bc.failAll(err)
	bc.closeConn()
}
