package locality

import (
	"errors"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/handoff"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// A request that is not on the steady local path runs as a task: a small
// state machine on the request's loop that sends one sub-request at a
// time (to the inner tier or over a link) and answers the client after
// the last. A forward is the task's own step; a request served here
// during a migration runs the shared handoff protocol (package handoff),
// whose primary end is the local tiers and whose other end is the
// migration's other region. Tasks are reused per loop, so a warm forward
// allocates nothing.

var tkZeroReq tiers.Request

type task struct {
	t      *Tier
	ls     *loopState
	client *tiers.Op
	sub    tiers.Op
	id     keyrule.ID // borrows client.Req.Key
	h      uint64
	name   string
	loc    loccache.Location // the view the request was routed with
	// forwarding: the sub-request in flight is the forward; else it is
	// the handoff machine's.
	forwarding bool
	// retried: a wrong-owner answer was followed by a fresh read and a
	// retry; reread: the location was read fresh for this request;
	// counted: its access was told to the directory.
	retried, reread, counted bool
	m                        handoff.Machine
	rules                    handoff.Rules // set once, when the loop makes the task
	other                    int           // peer index of the handoff's other end
}

// handoffRules are the tier's handoff.Rules. A fill's TTL is bounded by
// MaxTTL (values written before the clamp, or by hand, included), and
// every read here skips placeholders: reads go through a layering, and a
// client's own lease must not take a fill's placeholder for its own.
func (t *Tier) handoffRules() handoff.Rules {
	return handoff.Rules{LeaseTTL: t.lease, MaxTTL: t.maxTTL, MaskPlaceholders: true}
}

func (tk *task) start(op *tiers.Op, id keyrule.ID, h uint64) {
	tk.client, tk.id, tk.h = op, id, h
	tk.sub.Stall = op.Stall // a forward or handoff step is the client's request
	tk.name = tk.ls.names.get(tk.t.rules, h, id)
	tk.retried, tk.reread, tk.counted = false, false, false
}

// finish answers the client; the task is recycled first, since Done may
// issue a request that takes it.
func (tk *task) finish() {
	c := tk.client
	tk.ls.recycle(tk)
	c.Done(c)
}

func (tk *task) access(remote bool) {
	switch {
	case tk.counted:
	case tk.client.Req.Link:
		tk.counted = true
		tk.t.dir.Served(tk.name)
	default:
		tk.counted = true
		tk.t.dir.Access(tk.name, remote)
	}
}

// route sends the request where loc says, on the loop.
func (tk *task) route(loc loccache.Location) {
	t, r := tk.t, &tk.client.Req
	tk.loc = loc
	serving := loc.Serving() == t.cfg.Region
	if r.Link {
		// A link request is never forwarded again. The sender routed it
		// with an epoch at least as new as ours and thinks we serve:
		// read once more, bypassing caches, before refusing (or, with a
		// newer epoch, before serving).
		if !tk.reread && (r.LinkEpoch > loc.Epoch || (!serving && r.LinkEpoch == loc.Epoch)) {
			tk.reread = true
			tk.resolve(true)
			return
		}
		if !serving {
			t.ctr.refused.Add(1)
			tk.client.Res.Reset()
			tk.client.Res.Status, tk.client.Res.Err = tiers.StatusError, linkproto.ErrWrongOwner
			tk.finish()
			return
		}
		if r.IsWrite() && (linkproto.Token{Deadline: r.LinkDeadline}).Late(t.cfg.Now().UnixMilli()) {
			// Its sender has answered it as failed: a client may since
			// have written the key again, and this one must not land
			// over that (linkproto's deadline).
			t.ctr.late.Add(1)
			tk.client.Res.Reset()
			tk.client.Res.Status, tk.client.Res.Err = tiers.StatusError, ErrLate
			tk.finish()
			return
		}
	}
	if !serving {
		tk.forward()
		return
	}
	if t.dir.Fenced(t.cfg.Now()) {
		tk.unreachable(ErrFenced)
		return
	}
	if r.Link {
		t.ctr.linkServed.Add(1)
	} else {
		t.ctr.local.Add(1)
	}
	tk.access(false)
	switch {
	// A write runs first in the region fills read from, the source, then
	// in the other (handoff.Machine.Write says why).
	case loc.State == loccache.Prepare && r.IsWrite():
		// We are the source, still serving: the destination must not keep
		// a copy older than this write.
		tk.run(tk.handoff(loc.Owner).Write(1, handoff.AtPrimary))
	case loc.State == loccache.Migrating && r.IsWrite():
		// We are the destination: the source must not keep one either,
		// or a fill could copy it back.
		tk.run(tk.handoff(loc.Source).Write(1, handoff.AtOther))
	case loc.State == loccache.Migrating && r.IsRead():
		tk.run(tk.handoff(loc.Source).Fill())
	case loc.State == loccache.Migrating:
		tk.run(tk.handoff("").Read())
	case loc.State == loccache.Stable:
		// Just settled here: for a fill lease after, writes still delete
		// at the old source and reads skip placeholders (settle.go).
		if src, ok := t.settle.source(tk.name, loc.Epoch, t.cfg.Now()); ok {
			if r.IsWrite() {
				tk.run(tk.handoff(src).Write(1, handoff.AtOther))
			} else {
				tk.run(tk.handoff("").Read())
			}
			return
		}
		fallthrough
	default:
		c := tk.client
		tk.ls.recycle(tk)
		t.local(c)
	}
}

// forward sends the request to the serving region with the epoch.
func (tk *task) forward() {
	t := tk.t
	tk.access(true)
	peer := -1
	if t.links != nil {
		peer = t.links.Peer(tk.loc.Serving())
	}
	if peer < 0 {
		tk.unreachable(ErrNoLink)
		return
	}
	t.ctr.forwarded.Add(1)
	tk.forwarding = true
	tk.sub.Req = tk.client.Req
	t.links.Send(peer, &tk.sub, linkproto.Token{Epoch: tk.loc.Epoch})
}

// handoff readies the handoff machine for the client's request, with
// region other ("" for none: a read that stays here) as its other end.
func (tk *task) handoff(other string) *handoff.Machine {
	tk.forwarding = false
	tk.other = -1
	if other != "" && tk.t.links != nil {
		tk.other = tk.t.links.Peer(other)
	}
	tk.m.Init(&tk.rules, tk.client, tk.client.Req.Key, &tk.sub.Req)
	return &tk.m
}

// run carries out the machine's action a: the primary end is the local
// tiers, the other end the peer tk.other, reached with the source marker.
func (tk *task) run(a handoff.Action) {
	t := tk.t
	switch a.Event {
	case handoff.OtherFailed:
		t.ctr.otherFailed.Add(1)
	case handoff.Filled:
		t.ctr.fills.Add(1)
	case handoff.FillLost:
		t.ctr.fillsLost.Add(1)
	}
	switch {
	case a.Step == handoff.Done:
		tk.finish()
	case a.End == handoff.AtOther:
		tk.sendOther()
	case a.Step == handoff.Read:
		// From the tier of record: WantCAS keeps the layering from
		// promoting a placeholder into L1.
		tk.sub.Req.WantCAS = true
		t.local(&tk.sub)
	default:
		t.local(&tk.sub)
	}
}

// local hands op (a client's request, or a handoff step for one) to the
// local tiers, from a task: the request may have waited for a lookup or a
// link step. A write whose client request was read before a stall that
// has ended since is failed with stall.ErrHeld instead: a memcached pool
// holds it by the same stamp (tiers.Op.Stall), but an embedded store
// applies what it is handed. The steady local path never waits, and
// skips this.
func (t *Tier) local(op *tiers.Op) {
	if op.Stall != 0 && op.Req.Kind != tiers.KindGet && op.HeldThrough(t.stall.Gen(stall.Now())) {
		op.Res.Reset()
		op.Res.Status, op.Res.Err = tiers.StatusError, stall.ErrHeld
		op.Done(op)
		return
	}
	t.inner.Do(op)
}

// sendOther sends tk.sub to the peer tk.other with the source marker.
func (tk *task) sendOther() {
	if tk.other < 0 {
		tk.sub.Res.Reset()
		tk.sub.Res.Status, tk.sub.Res.Err = tiers.StatusError, ErrNoLink
		tk.next(&tk.sub)
		return
	}
	tk.t.links.Send(tk.other, &tk.sub, linkproto.Token{Source: true})
}

// next runs on the loop when the sub-request in flight completes.
func (tk *task) next(sub *tiers.Op) {
	if tk.forwarding {
		tk.forwarded(&sub.Res)
		return
	}
	tk.run(tk.m.Next(&sub.Res, tk.stillFilling))
}

// forwarded handles the serving region's answer.
func (tk *task) forwarded(res *tiers.Result) {
	t := tk.t
	switch {
	case res.Status == tiers.StatusError && errors.Is(res.Err, linkproto.ErrWrongOwner):
		t.ctr.wrongOwner.Add(1)
		if tk.retried {
			tk.unreachable(res.Err)
			return
		}
		tk.retried, tk.reread = true, true
		tk.ls.cache.Invalidate(tk.h, tk.id, tk.loc.Epoch)
		tk.resolve(true)
	case res.Status == tiers.StatusError && errors.Is(res.Err, link.ErrUnreachable):
		tk.unreachable(res.Err)
	default:
		handoff.CopyResult(&tk.client.Res, res)
		tk.finish()
	}
}

// unreachable answers a request whose serving region (or location) could
// not be reached: a read misses, anything else fails. A read that came
// over a link misses too (at a fenced owner, say): the error would not
// survive the link as ErrUnreachable, so the region that forwarded it
// would hand its client a SERVER_ERROR where a miss is promised.
func (tk *task) unreachable(err error) {
	tk.t.ctr.unreachable.Add(1)
	if tk.client.Req.IsRead() {
		tk.miss()
		return
	}
	c := &tk.client.Res
	c.Reset()
	c.Status, c.Err = tiers.StatusError, err
	tk.finish()
}

// unresolved answers a request whose location lookup failed. It was
// served nowhere, so no access is counted.
func (tk *task) unresolved(err error) { tk.unreachable(err) }

// stillFilling reports whether this loop's view still has the μ-shard
// migrating from the same source at the same epoch: checked after the
// source read, before the store here. Once the view moves on (Stable, or
// another move), a value read before must not be stored.
func (tk *task) stillFilling() bool {
	cur, ok := tk.ls.cache.Peek(tk.h, tk.id)
	return ok && cur.Epoch == tk.loc.Epoch && cur.State == loccache.Migrating && cur.Source == tk.loc.Source
}

func (tk *task) miss() {
	tk.client.Res.Reset()
	tk.client.Res.Status = tiers.StatusMiss
	tk.finish()
}
