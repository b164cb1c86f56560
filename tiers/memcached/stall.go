package memcached

import (
	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
)

// Stalls. When the process stops and resumes (internal/stall), the
// requests a connection had encoded but not written yet, or kept in its
// backlog, may belong to clients that gave up while it was stopped; a
// write among them sent now could land after a newer write acknowledged
// meanwhile through another strata. So a write queued but unsent at a
// stall is never sent: the first flush round that sees the new stall
// generation fails it with stall.ErrHeld (SERVER_ERROR to the client, who
// may retry). Reads are still sent: running one late changes nothing.
// Requests already written were sent while their clients waited; the
// server runs them as it reads them, and the process's stop does not
// delay that.
//
// Which requests. A held request is one whose late run could change what
// a later read returns: set, delete, arithmetic and flush_all (a touch
// only moves an expiry, and goes on like a read, as in the proxy). A held
// write that had to land (a delete, not an add: mustLand) taints its
// server in a pool that flushes on return, like any skipped write.
//
// Cost. Each flush round loads the generation once (FlushLoop calls
// stall.Detector.Gen: a clock read and one or two atomic loads), so the
// loop's view (loopState.stallGen) is as of its newest round; the ticker
// gives every loop a round each tick, so the view of an idle loop is
// fresh too. A connection compares, when it flushes, the view under which
// its oldest unsent request was queued (unsentGen) with the round's; a
// request pays one length test when it is queued. Nothing allocates
// unless a stall holds something.
//
// The round that first sees the stall also holds writes queued in it
// before its flush, though they may have been read after the process
// woke: the over-approximation costs a retry, never a late write. The
// process may also stop between a flush's check and its write; that
// window is a few instructions long, against a threshold of 500ms.
//
// Writes parked inside a tier. A request an upper tier (or a move's
// handoff here) parked across the stall, waiting for a location, a
// sub-request's reply or a fill, reaches submit after the round that saw
// the stall: its bytes were never unsent here, so the rule above misses
// it. Its Op carries the generation its client request was read under
// (tiers.Op.Stall, copied into sub-Ops), and submit fails a write whose
// stamp is older than the loop's view (parkedThroughStall), with the same
// counters and taint as a held unsent write. One place for every tier:
// whatever waited, a write leaves only through submit. The loop's view
// may lag the detector by a round; a parked write submitted in that round
// joins wbuf under the old view and is held by the round's flush, as
// above. An unstamped Op (a tier's own work) is never held.

// noteUnsent stamps the connection's unsent requests with the loop's view
// of the stall generation when the first of them is queued. It is called
// just before a request joins wbuf or the backlog.
func (bc *bconn) noteUnsent() {
	if len(bc.wbuf) == 0 && bc.backlog.Len() == 0 {
		bc.unsentGen = bc.ls.stallGen
	}
}

// parkedThroughStall reports whether the request (op, or the flush_all of
// fan) is a write whose client request was read before the loop's view
// of the stall generation: it waited inside a tier across a stall. It
// costs a load and a comparison for a request that is not.
func (bc *bconn) parkedThroughStall(op *tiers.Op, fan *fanout) bool {
	if fan != nil {
		op = fan.op
	}
	return op.HeldThrough(bc.ls.stallGen) && op.Req.Kind != tiers.KindGet
}

// seeStall refreshes the loop's view of the stall generation; every flush
// round calls it before writing anything.
func (p *Pool) seeStall(ls *loopState) {
	ls.stallGen = p.stall.Gen(stall.Now())
}

// holdIfStalled runs before bc writes: if its unsent requests were queued
// under an older stall generation than the round's, their writes are
// failed and taken out of wbuf and the backlog; reads stay, in order.
func (bc *bconn) holdIfStalled() {
	if bc.unsentGen == bc.ls.stallGen {
		return
	}
	bc.unsentGen = bc.ls.stallGen // before any Done: one may queue afresh
	if len(bc.wbuf) == 0 && bc.backlog.Len() == 0 {
		return
	}
	// The unsent requests of q are its newest, whose sizes add up to
	// len(wbuf) (bconn's invariant).
	k, sum := 0, 0
	for sum < len(bc.wbuf) {
		k++
		sum += int(bc.q.At(bc.q.Len() - k).size)
	}
	unsent := bc.q.TakeNewest(k)
	var held []pend
	buf, off, kept := bc.wbuf, 0, 0
	for _, e := range unsent {
		n := int(e.size)
		if e.writes() {
			held = append(held, e)
			bc.inflight -= n
		} else {
			copy(buf[kept:], buf[off:off+n])
			kept += n
			bc.q.Push(e)
		}
		off += n
	}
	bc.wbuf = buf[:kept]
	waiting := bc.backlog.TakeAll()
	for _, e := range waiting {
		if e.writes() {
			held = append(held, e)
		} else {
			bc.backlog.Push(e)
		}
	}
	if bc.q.Len() == 0 && bc.backlog.Len() > 0 {
		bc.admit() // the backlog is empty whenever q is (wait's invariant)
	}
	for i := range held {
		e := &held[i]
		bc.ctr.errors.Add(1)
		bc.ctr.held.Add(1)
		bc.taintIfSkipped(e)
		if e.fan != nil {
			e.fan.done(stall.ErrHeld)
			continue
		}
		complete(e.op, tiers.StatusError, stall.ErrHeld)
	}
}

// writes reports whether e's late run could change what a later read
// returns (the proxy's rule: anything but a get, which a touch is).
func (e *pend) writes() bool {
	return e.fan != nil || e.op.Req.Kind != tiers.KindGet
}
