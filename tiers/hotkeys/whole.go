package hotkeys

import (
	"strconv"

	"github.com/strata-cache/strata/tiers"
)

// Operations on a split key as a whole (counter and list alike): read and
// aggregate every part, delete every part, store the base and clear the
// parts.

// allParts lays out the base key (-1) followed by every part.
func (f *fan) allParts() []int {
	parts := append(f.scratchParts(), -1)
	return append(parts, f.cands...)
}

func (f *fan) scratchParts() []int {
	if cap(f.partBuf) < MaxSplit+1 {
		f.partBuf = make([]int, 0, MaxSplit+1)
	}
	return f.partBuf[:0]
}

// aggregation says how the values of the parts combine into one.
type aggregation uint8

const (
	aggSum    aggregation = iota // counters: decimal sum
	aggConcat                    // lists: base, then the parts in order
)

// readAll reads the base key with the client's request and every part
// with a plain value read, in one round, and answers with the aggregate.
// gat and touch (HasTTL) apply their TTL to every part too.
//
// Every read of a split key asks for the TTL, which makes it a read of the
// tier of record (the layering serves such reads from L2 only): a part
// promoted into one cluster's L1 would go stale there when another
// cluster's strata increments it, and write-hot parts gain nothing from
// L1 anyway.
func (f *fan) readAll(agg aggregation) {
	parent := &f.parent.Req
	sub := *parent
	sub.WantValue = true
	sub.WantFlags = true
	sub.WantTTL = true
	part := tiers.Request{Kind: tiers.KindGet, WantValue: true, WantTTL: true, TTL: parent.TTL, HasTTL: parent.HasTTL, Text: parent.Text}
	f.round(f.allParts(), &sub, &part)
	f.agg = agg
	f.issue(f.t.inner, (*fan).readAllDone)
}

func (f *fan) readAllDone() {
	base := &f.subs[0].Res
	res := &f.res
	res.Reset()
	found := false
	for i := range f.subs {
		s := &f.subs[i].Res
		if s.Status == tiers.StatusError {
			f.finish(s)
			return
		}
		if s.Status == tiers.StatusHit {
			found = true
		}
	}
	if !found {
		f.finish(base)
		return
	}
	if base.Status == tiers.StatusHit {
		v := res.Value
		*res = *base
		res.Value = v[:0]
	} else {
		res.Status = tiers.StatusHit
		res.TTL = -1
	}
	switch f.agg {
	case aggSum:
		if base.Status == tiers.StatusHit {
			if _, ok := parseCount(base.Value); !ok {
				// Not a counter: the base value is all there is.
				res.Value = append(res.Value, base.Value...)
				f.finishFolded(res)
				return
			}
		}
		var sum uint64
		for i := range f.subs {
			if s := &f.subs[i].Res; s.Status == tiers.StatusHit {
				n, _ := parseCount(s.Value)
				sum += n
			}
		}
		res.Value = strconv.AppendUint(res.Value, sum, 10)
		if f.bkGet != nil {
			f.t.bounded.read(f.bkGet, sum, f.bsnap)
		}
	case aggConcat:
		for i := range f.subs {
			if s := &f.subs[i].Res; s.Status == tiers.StatusHit {
				res.Value = append(res.Value, s.Value...)
			}
		}
	}
	f.finishFolded(res)
}

// finishFolded answers a read of a split key with res, whose value is
// folded from several items: its CAS, if asked for, is FoldedCAS.
func (f *fan) finishFolded(res *tiers.Result) {
	res.Size = len(res.Value)
	if f.parent.Req.WantCAS {
		res.CAS = FoldedCAS
	}
	f.finish(res)
}

// deleteAll deletes the base key and every part in one round; the reply is
// DELETED when any of them existed.
func (f *fan) deleteAll() {
	f.round(f.allParts(), &f.parent.Req, nil)
	f.issue(f.t.inner, (*fan).anyDone)
}

// anyDone answers with the first error, else the first success, else the
// base key's result.
func (f *fan) anyDone() {
	for i := range f.subs {
		if s := &f.subs[i].Res; s.Status == tiers.StatusError {
			f.finish(s)
			return
		}
	}
	for i := range f.subs {
		if s := &f.subs[i].Res; s.Status == tiers.StatusStored || s.Status == tiers.StatusHit {
			f.finish(s)
			return
		}
	}
	f.finish(&f.subs[0].Res)
}

// store serves a set-family request on a counter or list key. A plain set
// writes the base key and deletes every part in one round, so a read
// pipelined after it on the same connection sees the new value whole. A
// conditional store (add, replace) first writes the base and deletes the
// parts only once it succeeded, so a refused add leaves the counter alone.
// append/prepend on a counter key apply to the base key alone.
func (f *fan) store() {
	pr := &f.parent.Req
	switch pr.Mode {
	case tiers.ModeSet:
		f.round(f.allParts(), pr, &tiers.Request{Kind: tiers.KindDelete})
		f.issue(f.t.inner, func(f *fan) {
			if s := &f.subs[0].Res; s.Status != tiers.StatusStored {
				f.finish(s)
				return
			}
			for i := 1; i < len(f.subs); i++ {
				if s := &f.subs[i].Res; s.Status == tiers.StatusError {
					f.finish(s)
					return
				}
			}
			f.finish(&f.subs[0].Res)
		})
	case tiers.ModeAdd, tiers.ModeReplace:
		f.round([]int{-1}, pr, nil)
		f.issue(f.t.inner, func(f *fan) {
			if s := &f.subs[0].Res; s.Status != tiers.StatusStored {
				f.finish(s)
				return
			}
			f.res = f.subs[0].Res
			f.res.Value = nil
			f.round(f.cands, &tiers.Request{Kind: tiers.KindDelete}, nil)
			f.completing()
			f.issue(f.t.inner, func(f *fan) {
				for i := range f.subs {
					if s := &f.subs[i].Res; s.Status == tiers.StatusError {
						f.finish(s)
						return
					}
				}
				f.finish(&f.res)
			})
		})
	default:
		f.round([]int{-1}, pr, nil)
		f.issue(f.t.inner, func(f *fan) { f.finish(&f.subs[0].Res) })
	}
}
