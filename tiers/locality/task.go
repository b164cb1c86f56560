package locality

import (
	"errors"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/loccache"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
)

// A request that is not on the steady local path runs as a task: a small
// state machine on the request's loop that sends one sub-request at a
// time (to the inner tier or over a link) and answers the client after
// the last. Tasks are reused per loop, so a warm forward allocates
// nothing.

type step uint8

const (
	stepForward    step = iota // the request at the serving region
	stepPrimary                // the client's write at the local tiers
	stepOther                  // md Osrc at the migration's other side, after the write
	stepOtherFirst             // md Osrc at the other side, before a delete here
	stepDeleteLast             // the client's delete at the local tiers
	stepRead                   // a read here that must not return a fill's placeholder
	stepLease                  // mg N at the local tiers (destination miss)
	stepSource                 // mg Osrc at the source
	stepFill                   // ms C<lease> at the local tiers
	stepRelease                // md C<lease>: drop our placeholder
)

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
	step   step
	// retried: a wrong-owner answer was followed by a fresh read and a
	// retry; reread: the location was read fresh for this request;
	// counted: its access was told to the directory.
	retried, reread, counted bool
	otherFailed              bool   // the delete at the other side failed
	lease                    uint64 // the CAS of our placeholder
	other                    int    // peer index of the other side
}

func (tk *task) start(op *tiers.Op, id keyrule.ID, h uint64) {
	tk.client, tk.id, tk.h = op, id, h
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
	if !tk.counted && !tk.client.Req.Link {
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
	case loc.State == loccache.Prepare && isWrite(r):
		// We are the source, still serving: the destination must not keep
		// a copy older than this write.
		tk.writeAndDelete(loc.Owner)
	case loc.State == loccache.Migrating && isWrite(r):
		// We are the destination: the source must not keep one either,
		// or a fill could copy it back.
		tk.writeAndDelete(loc.Source)
	case loc.State == loccache.Migrating && fillable(r):
		tk.leaseRead()
	case loc.State == loccache.Migrating:
		tk.read()
	case loc.State == loccache.Stable:
		// Just settled here: for a fill lease after, writes still delete
		// at the old source and reads skip placeholders (settle.go).
		if src, ok := t.settle.source(tk.name, loc.Epoch, t.cfg.Now()); ok {
			if isWrite(r) {
				tk.writeAndDelete(src)
			} else {
				tk.read()
			}
			return
		}
		fallthrough
	default:
		c := tk.client
		tk.ls.recycle(tk)
		t.inner.Do(c)
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
	tk.step = stepForward
	tk.sub.Req = tk.client.Req
	t.links.Send(peer, &tk.sub, linkproto.Token{Epoch: tk.loc.Epoch})
}

// writeAndDelete applies the client's write here and deletes the key at
// region other, the migration's other side. A set or arith goes here
// first: a fill that raced it finds its value, or loses its placeholder
// to it. A delete goes there first: deleted here first, a miss could take
// a lease, read the old value there before our delete reached it, and
// store it here after ours (nothing here would then make the fill fail).
func (tk *task) writeAndDelete(other string) {
	tk.other = -1
	if tk.t.links != nil {
		tk.other = tk.t.links.Peer(other)
	}
	tk.otherFailed = false
	if tk.client.Req.Kind == tiers.KindDelete {
		tk.step = stepOtherFirst
		tk.sub.Req = tiers.Request{Kind: tiers.KindDelete, Key: tk.client.Req.Key, KeyBinary: tk.client.Req.KeyBinary}
		tk.sendOther()
		return
	}
	tk.step = stepPrimary
	tk.sub.Req = tk.client.Req
	tk.t.inner.Do(&tk.sub)
}

// read reads here, as the serving region while a fill's placeholder may
// be about: from the tier of record (WantCAS keeps the layering from
// promoting a placeholder into L1), and a placeholder reads as a miss.
func (tk *task) read() {
	tk.step = stepRead
	tk.sub.Req = tk.client.Req
	tk.sub.Req.WantCAS = true
	tk.t.inner.Do(&tk.sub)
}

// leaseRead reads at the destination taking a lease on a miss.
func (tk *task) leaseRead() {
	tk.step = stepLease
	tk.sub.Req = tk.client.Req
	r := &tk.sub.Req
	r.Text = false // a text get hands out no win token
	r.Vivify, r.VivifyTTL = true, tk.t.lease
	r.WantValue, r.WantCAS, r.WantFlags, r.WantTTL = true, true, true, true
	tk.t.inner.Do(&tk.sub)
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
	t, res, c := tk.t, &sub.Res, &tk.client.Res
	switch tk.step {
	case stepForward:
		tk.forwarded(res)
	case stepPrimary:
		copyResult(c, res)
		// Delete at the other side whatever the write answered: one that
		// failed for a timeout may still have been applied.
		tk.step = stepOther
		tk.sub.Req = tiers.Request{Kind: tiers.KindDelete, Key: tk.client.Req.Key, KeyBinary: tk.client.Req.KeyBinary}
		tk.sendOther()
	case stepOther:
		if res.Status == tiers.StatusError {
			// Not deleted there: acknowledging the write could let a read
			// there, or a fill from there, serve the value it replaced.
			t.ctr.otherFailed.Add(1)
			c.Reset()
			c.Status, c.Err = tiers.StatusError, res.Err
		}
		tk.finish()
	case stepOtherFirst:
		if res.Status == tiers.StatusError {
			t.ctr.otherFailed.Add(1)
			tk.otherFailed = true
			c.Reset()
			c.Status, c.Err = tiers.StatusError, res.Err
		}
		// Delete here whatever happened there: the value is gone where
		// we serve, and a fill of the old one, before an acknowledged
		// delete, is allowed.
		tk.step = stepDeleteLast
		tk.sub.Req = tk.client.Req
		t.inner.Do(&tk.sub)
	case stepDeleteLast:
		if !tk.otherFailed {
			copyResult(c, res)
		}
		tk.finish()
	case stepRead:
		if placeholder(res) {
			tk.miss()
			return
		}
		copyResult(c, res)
		tk.finish()
	case stepLease:
		switch {
		case res.Status == tiers.StatusError:
			copyResult(c, res)
			tk.finish()
		case res.Win:
			tk.lease = res.CAS
			tk.other = -1
			if t.links != nil {
				tk.other = t.links.Peer(tk.loc.Source)
			}
			tk.step = stepSource
			tk.sub.Req = tiers.Request{Kind: tiers.KindGet, Key: tk.client.Req.Key, KeyBinary: tk.client.Req.KeyBinary,
				WantValue: true, WantFlags: true, WantTTL: true, NoBump: true}
			tk.sendOther()
		case res.Status != tiers.StatusHit || res.AlreadyWon || res.Stale:
			tk.miss() // another reader holds the lease and fills
		default:
			copyResult(c, res)
			tk.finish()
		}
	case stepSource:
		if res.Status != tiers.StatusHit || res.TTL == 0 || !tk.stillFilling() {
			if res.Status == tiers.StatusHit {
				t.ctr.fillsLost.Add(1)
			}
			tk.release()
			return
		}
		ttl := res.TTL
		if ttl < 0 || ttl > t.maxTTL {
			ttl = t.maxTTL // written before the clamp, or by hand: bound it here
		}
		c.Reset()
		c.Value = append(c.Value, res.Value...)
		c.ClientFlags, c.TTL, c.Size = res.ClientFlags, ttl, len(res.Value)
		tk.step = stepFill
		tk.sub.Req = tiers.Request{Kind: tiers.KindSet, Key: tk.client.Req.Key, KeyBinary: tk.client.Req.KeyBinary,
			Value: c.Value, ClientFlags: c.ClientFlags, TTL: ttl, HasCompareCAS: true, CompareCAS: tk.lease, WantCAS: true}
		t.inner.Do(&tk.sub)
	case stepFill:
		if res.Status != tiers.StatusStored {
			// A write or delete here came after our placeholder: what the
			// source gave may be older than an acknowledged write.
			t.ctr.fillsLost.Add(1)
			tk.miss()
			return
		}
		c.Status, c.CAS = tiers.StatusHit, res.CAS
		t.ctr.fills.Add(1)
		tk.finish()
	case stepRelease:
		tk.miss()
	}
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
		copyResult(&tk.client.Res, res)
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
	if isRead(&tk.client.Req) {
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

// release drops our placeholder, only if still ours, and answers a miss.
func (tk *task) release() {
	tk.step = stepRelease
	tk.sub.Req = tiers.Request{Kind: tiers.KindDelete, Key: tk.client.Req.Key, KeyBinary: tk.client.Req.KeyBinary,
		HasCompareCAS: true, CompareCAS: tk.lease}
	tk.t.inner.Do(&tk.sub)
}

func (tk *task) miss() {
	tk.client.Res.Reset()
	tk.client.Res.Status = tiers.StatusMiss
	tk.finish()
}

// placeholder reports whether a hit is the empty item a fill's lease
// left (mg N marks it with W for its taker, Z for everyone after): not a
// value anyone wrote.
func placeholder(res *tiers.Result) bool {
	return res.Status == tiers.StatusHit && (res.Win || res.AlreadyWon)
}

// copyResult copies src into dst, keeping dst's value buffer.
func copyResult(dst, src *tiers.Result) {
	v := append(dst.Value[:0], src.Value...)
	*dst = *src
	dst.Value = v
}
