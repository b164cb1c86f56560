package link

import (
	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
)

// Stalls. When the process stops and resumes (internal/stall), the
// requests a connection had encoded but not written yet may belong to
// clients that gave up while it was stopped: a forwarded write sent now
// could run at the owner after a newer write it acknowledged meanwhile.
// So a write queued but unsent at a stall is never sent: the first flush
// round that sees the new stall generation fails it with stall.ErrHeld
// (SERVER_ERROR to the client); forwarded and source reads are still
// sent, in order. A write is anything but a get (a touch moves an expiry
// only, and goes on like a read, as in the proxy); a source delete is a
// write too, and failing it fails the migration step's write, which is
// allowed (a miss later, never a stale value).
//
// Requests already written were in the kernel's hands while their
// clients waited; a stop of this process does not delay their delivery
// (the package locality doc says what a stop of the whole machine does).
//
// A write a locality task parked across the stall (waiting for a location
// lookup, or for the reply of a migration's previous step) reaches submit
// after the round that saw it, so the rule above misses it. Its Op carries
// the generation its client request was read under (tiers.Op.Stall), and
// submit fails a write stamped before the loop's view with stall.ErrHeld
// (parkedThroughStall), counted in Held like an unsent one: the one check
// every forward and source request passes before it leaves the process.
// A write submitted in the round that first sees the stall, before its
// flush, joins wbuf under the old view and is held by the flush.
//
// Cost, as in tiers/memcached: one generation load per flush round
// (FlushLoop), a comparison per connection flushed, one length test and
// one stamp comparison per request queued; allocation only when a stall
// holds something.

// holdIfStalled runs before pc writes: if its unsent requests were queued
// under an older stall generation than the round's, their writes are
// failed and taken out of wbuf; reads stay, in order.
func (pc *pconn) holdIfStalled() {
	if pc.unsentGen == pc.ls.stallGen {
		return
	}
	pc.unsentGen = pc.ls.stallGen // before any Done: one may queue afresh
	if len(pc.wbuf) == 0 {
		return
	}
	// The unsent requests are q's newest, whose sizes add up to
	// len(wbuf) (pconn's invariant).
	k, sum := 0, 0
	for sum < len(pc.wbuf) {
		k++
		sum += int(pc.q.At(pc.q.Len() - k).size)
	}
	var held []pend
	buf, off, kept := pc.wbuf, 0, 0
	for _, e := range pc.q.TakeNewest(k) {
		n := int(e.size)
		if e.op.Req.Kind != tiers.KindGet {
			held = append(held, e)
		} else {
			copy(buf[kept:], buf[off:off+n])
			kept += n
			pc.q.Push(e)
		}
		off += n
	}
	pc.wbuf = buf[:kept]
	for _, e := range held {
		pc.ls.ctr.errors.Add(1)
		pc.ls.ctr.held.Add(1)
		complete(e.op, stall.ErrHeld)
	}
}

// parkedThroughStall reports whether op is a write whose client request
// was read before the loop's view of the stall generation: it waited
// inside a tier across a stall.
func (pc *pconn) parkedThroughStall(op *tiers.Op) bool {
	return op.HeldThrough(pc.ls.stallGen) && op.Req.Kind != tiers.KindGet
}
