package hotkeys

import (
	"github.com/strata-cache/strata/tiers"
)

// list serves one request on a key under a list rule. The list is the
// base key's value followed by every part's, in part order; appends and
// prepends go to one part each, so the order of items written through
// different parts is not kept (documented in doc.go).
func (t *Tier) list(op *tiers.Op, r *Rule, active bool) {
	req := &op.Req
	f := t.getFan(op, r, active)
	if refuse, exists := casRefusal(req); refuse {
		f.refuseCAS(exists, errCASList)
		return
	}
	f.partNames(t.l2p)
	t.stats.splitOps.Add(1)
	switch {
	case req.Kind == tiers.KindGet:
		f.readAll(aggConcat)
	case req.Kind == tiers.KindDelete:
		f.deleteAll()
	case req.Kind == tiers.KindSet && (req.Mode == tiers.ModeAppend || req.Mode == tiers.ModePrepend):
		f.appendPart()
	case req.Kind == tiers.KindSet:
		f.store()
	default:
		f.round([]int{-1}, req, nil)
		f.issue(t.inner, func(f *fan) { f.finish(&f.subs[0].Res) })
	}
}

// appendPart appends to the next part of this loop's rotation (the base
// key when the key is not split), reading in the same round whether the
// base key exists. A part that does not exist yet is created with add when
// the list exists (the base key does); a lost race to create it retries
// the append once.
func (f *fan) appendPart() {
	if !f.active {
		f.round([]int{-1}, &f.parent.Req, nil)
		f.issue(f.t.inner, func(f *fan) { f.finish(&f.subs[0].Res) })
		return
	}
	ls := f.t.loop(f.parent.Loop)
	var n uint32
	if ls != nil {
		n = ls.rr.Add(1)
	}
	f.target = f.cands[int(n)%len(f.cands)]
	f.round([]int{f.target, -1}, &f.parent.Req, &tiers.Request{Kind: tiers.KindGet, WantTTL: true})
	f.issue(f.t.inner, (*fan).appendDone)
}

func (f *fan) appendDone() {
	tgt, base := &f.subs[0].Res, &f.subs[1].Res
	if tgt.Status != tiers.StatusNotStored {
		f.finish(tgt)
		return
	}
	if base.Status != tiers.StatusHit {
		if base.Status == tiers.StatusError {
			f.finish(base)
			return
		}
		f.finish(tgt) // no list: NOT_STORED, as memcached answers
		return
	}
	add := f.parent.Req
	add.Mode = tiers.ModeAdd
	add.TTL = 0
	if base.TTL > 0 {
		add.TTL = base.TTL
	}
	f.round([]int{f.target}, &add, nil)
	f.issue(f.t.inner, func(f *fan) {
		if s := &f.subs[0].Res; s.Status != tiers.StatusNotStored {
			f.finish(s)
			return
		}
		f.round([]int{f.target}, &f.parent.Req, nil)
		f.issue(f.t.inner, func(f *fan) { f.finish(&f.subs[0].Res) })
	})
}
