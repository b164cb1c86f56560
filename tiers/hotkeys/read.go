package hotkeys

import (
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/fillguard"
)

// read serves one request on a key under a read rule. A plain read of a
// split key goes to one of its K copies in L1, the same one for every read
// of a connection; a copy that misses is filled from the inner tier (the
// tier of record) with add. Every write of the key, split or not, goes to
// the inner tier and then deletes all K copies before it is acknowledged,
// so through one strata no read after an acknowledged write sees an older
// value (the guard orders fills against those deletes); and a fill's read
// of the tier of record that meets a write under way deletes the copies
// before it answers, so no read sees an older value than one answered
// before it.
func (t *Tier) read(op *tiers.Op, r *Rule, active, write bool) {
	if t.l1 == nil {
		t.inner.Do(op)
		return
	}
	req := &op.Req
	if write {
		f := t.getFan(op, r, active)
		f.partNames(t.l1p)
		t.stats.splitOps.Add(1)
		f.slot = t.guard.SlotFor(f.base)
		f.slot.IssueWrite() // no fill begins until the copies are deleted
		f.wrote = true
		f.round([]int{-1}, req, nil)
		f.issue(t.inner, (*fan).writeDone)
		return
	}
	if !active || !req.Cacheable() {
		t.inner.Do(op)
		return
	}
	var tk nearTicket
	if r.Near > 0 {
		hit, hot, epoch := t.near.get(op, t.cfg.Now())
		if hit {
			t.stats.splitOps.Add(1)
			t.stats.nearHits.Add(1)
			op.Done(op)
			return
		}
		if hot {
			tk = nearTicket{epoch: epoch, ttl: int64(r.Near)}
		}
	}
	f := t.getFan(op, r, active)
	f.partNames(t.l1p)
	t.stats.splitOps.Add(1)
	f.target = f.cands[pickCopy(op.Conn, len(f.cands))]
	f.slot = t.guard.SlotFor(f.base)
	f.g0 = f.slot.Snapshot()
	if tk.ttl > 0 {
		tk.slot, tk.g0 = f.slot, f.g0
	}
	f.near = tk
	f.round([]int{f.target}, req, nil)
	f.issue(t.l1, (*fan).copyDone)
}

// pickCopy chooses a connection's copy. The proxy numbers connections in
// order of acceptance, so the plain remainder deals consecutive
// connections out over the copies in turn.
func pickCopy(conn uint64, k int) int {
	return int(conn % uint64(k))
}

func (f *fan) copyDone() {
	if s := &f.subs[0].Res; s.Status == tiers.StatusHit {
		f.t.stats.copyHits.Add(1)
		s.Level = 1
		f.putNear(s)
		f.finish(s)
		return
	}
	f.t.stats.copyMisses.Add(1)
	// The fill needs the flags and remaining TTL of record, which makes it
	// a read of the inner tier's authoritative copy.
	rd := f.parent.Req
	rd.WantValue, rd.WantFlags, rd.WantTTL = true, true, true
	f.round([]int{-1}, &rd, nil)
	f.issue(f.t.inner, (*fan).fillRead)
}

func (f *fan) fillRead() {
	s := &f.subs[0].Res
	if s.Status != tiers.StatusHit {
		f.finish(s)
		return
	}
	v := f.res.Value[:0]
	f.res = *s
	f.res.Value = append(v, s.Value...)
	f.putNear(&f.res)
	if f.slot.Writing() {
		// A write of the key's slot is under way: this may be its new
		// value while the copy still has, or a fill in flight is about to
		// put back, an older one. Answered now, the connection's next
		// read of that copy could go back in time; so the read deletes
		// the copies first, behind any fill in flight, as the write will
		// (fillguard).
		if f.slot.BeginWrite(fillguard.Waiter{Loop: f.loop, Resume: f.resume}) {
			f.invalidateCopies()
		}
		return
	}
	if !f.slot.BeginFill(f.g0) {
		f.t.stats.fillsSkipped.Add(1)
		f.finish(&f.res)
		return
	}
	// Answer the client now; the fill continues detached.
	p := f.parent
	f.parent = nil
	pv := p.Res.Value[:0]
	p.Res = f.res
	p.Res.Value = append(pv, f.res.Value...)
	p.Done(p)

	ttl := int64(f.t.cfg.L1MaxTTL.Seconds())
	if f.res.TTL > 0 && f.res.TTL < ttl {
		ttl = f.res.TTL
	}
	add := tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeAdd, Value: f.res.Value, ClientFlags: f.res.ClientFlags, TTL: ttl}
	f.round([]int{f.target}, &add, nil)
	f.t.stats.fills.Add(1)
	f.issue(f.t.l1, (*fan).fillDone)
}

func (f *fan) fillDone() {
	ws := f.slot.EndFill()
	t := f.t
	f.release()
	for _, w := range ws {
		t.runOn(w.Loop, w.Resume)
	}
}

// writeDone follows a write's acknowledgement by the inner tier: delete
// every copy, once no fill is in flight on the key's slot (f.slot, taken
// when the write was marked).
func (f *fan) writeDone() {
	s := &f.subs[0].Res
	v := f.res.Value[:0]
	f.res = *s
	f.res.Value = append(v, s.Value...)
	began := f.slot.BeginWrite(fillguard.Waiter{Loop: f.loop, Resume: f.resume})
	// After the generation moved: no read begun before can put in.
	if f.t.near.drop(f.base) {
		f.t.stats.nearDrops.Add(1)
	}
	if began {
		f.invalidateCopies()
	}
}

// invalidateCopies deletes every copy, for a write or for a read that met
// one (fillRead). L1 failures are ignored, as the layering ignores a
// failed invalidation: copies live at most L1MaxTTL.
func (f *fan) invalidateCopies() {
	f.round(f.cands, &tiers.Request{Kind: tiers.KindDelete}, nil)
	f.completing()
	f.issue(f.t.l1, func(f *fan) {
		f.t.stats.copyDeletes.Add(uint64(len(f.subs)))
		if f.wrote {
			f.slot.EndWrite()
		}
		f.finish(&f.res)
	})
}

// putNear keeps a read's value in the near cache, if the read took a
// ticket (its key was hot and its rule has Near).
func (f *fan) putNear(res *tiers.Result) {
	if f.near.slot == nil {
		return
	}
	if f.t.near.put(f.base, res.Value, res.ClientFlags, f.t.cfg.Now(), f.near) {
		f.t.stats.nearStores.Add(1)
	}
}
