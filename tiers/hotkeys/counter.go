package hotkeys

import (
	"math"
	"sort"
	"strconv"

	"github.com/strata-cache/strata/tiers"
)

// Errors a split key answers with CLIENT_ERROR.
const (
	errCASCounter = tiers.ClientError("cas is not supported on a split counter key (hot-key rule)")
	errCASList    = tiers.ClientError("cas is not supported on a split list key (hot-key rule)")
)

// FoldedCAS is the CAS token a gets (or mg with c) of a counter or list
// key under a rule answers with: the folded value has no single CAS. A cas
// (or a compare-CAS meta command) carrying it answers EXISTS, any other
// CAS on such a key CLIENT_ERROR. memcached hands out CAS values counting
// up from 1, so none of its items ever carries this one.
const FoldedCAS = math.MaxUint64

// casRefusal says whether a request on a counter or list key is refused
// for its CAS (a read that only wants a token is not: it gets FoldedCAS),
// and if so whether it answers EXISTS rather than a client error.
func casRefusal(req *tiers.Request) (refuse bool, exists bool) {
	if req.HasCompareCAS {
		return true, req.CompareCAS == FoldedCAS
	}
	return req.WantCAS && req.Kind != tiers.KindGet, false
}

// counter serves one request on a key under a counter rule. The counter's
// value is the base key plus every part; a part is a plain memcached
// counter, so each stays at or above 0 and an increment applied to one is
// never undone by another request.
func (t *Tier) counter(op *tiers.Op, r *Rule, active bool) {
	req := &op.Req
	f := t.getFan(op, r, active)
	if refuse, exists := casRefusal(req); refuse {
		f.refuseCAS(exists, errCASCounter)
		return
	}
	// A bounded incr names the parts only if it sends (most ride in
	// another's operation: combine.go).
	if req.Kind != tiers.KindArith || req.Mode == tiers.ModeDecr || !r.bounded() {
		f.partNames(t.l2p)
	}
	t.stats.splitOps.Add(1)
	switch req.Kind {
	case tiers.KindGet:
		if r.bounded() {
			f.boundedGet()
		}
		f.readAll(aggSum)
	case tiers.KindArith:
		switch {
		case req.Mode == tiers.ModeDecr:
			f.bkReset = r.bounded()
			f.decrRead()
		case r.bounded():
			f.incrBounded()
		default:
			f.incr()
		}
	case tiers.KindDelete:
		f.bkReset = r.bounded()
		f.deleteAll()
	case tiers.KindSet:
		f.bkReset = r.bounded()
		f.store()
	default:
		f.release()
		t.inner.Do(op)
	}
}

// parseCount reads a counter value as memcached stores it: decimal digits,
// possibly followed by the spaces a shrinking decr leaves behind.
func parseCount(v []byte) (uint64, bool) {
	end := len(v)
	for end > 0 && v[end-1] == ' ' {
		end--
	}
	if end == 0 || end > 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(v[:end]), 10, 64)
	return n, err == nil
}

// incr applies the increment to one part (the next in this loop's
// rotation; the base key when the key is not split) and reads every other
// part in the same round, so the reply is the counter's total.
func (f *fan) incr() {
	f.pickTarget(1)
	if f.parent.Req.NoReply {
		// Nobody reads the total: the increment alone, one sub-operation.
		// Should the part be absent, incrDone retries with the reads.
		arith := f.arithReq()
		f.round([]int{f.target}, &arith, nil)
		f.issue(f.t.inner, (*fan).incrDone)
		return
	}
	f.incrWithReads()
}

// pickTarget sets the part an incr goes to: the next in this loop's
// rotation, or the base key (-1) when the key is not split. With burst >
// 1, burst consecutive incrs of the loop share a part: a pipelined batch
// then reaches its server as one batch (a memcached's cost per operation
// falls with the batch), while the parts still take equal shares.
func (f *fan) pickTarget(burst uint32) {
	f.target = -1
	if f.active {
		ls := f.t.loop(f.parent.Loop)
		var n uint32
		if ls != nil {
			n = ls.rr.Add(1)
		}
		f.target = f.cands[int(n/burst)%len(f.cands)]
	}
}

// incrWithReads increments the target part and reads every other part in
// the same round.
func (f *fan) incrWithReads() {
	f.boundedReads()
	parts := append(f.scratchParts(), f.target, -1)
	if f.target == -1 {
		parts = parts[:1]
	}
	parts = append(parts, f.cands...)
	// Drop the target from the parts it was copied among.
	for i := 2; i < len(parts); i++ {
		if parts[i] == f.target {
			parts = append(parts[:i], parts[i+1:]...)
			break
		}
	}
	arith := f.arithReq()
	f.round(parts, &arith, &tiers.Request{Kind: tiers.KindGet, WantValue: true, WantTTL: true})
	if f.target != -1 {
		f.subs[1].Req.WantTTL = true // the base's TTL, should a part be created
	}
	f.issue(f.t.inner, (*fan).incrDone)
}

func (f *fan) incrDone() {
	tgt := &f.subs[0].Res
	switch tgt.Status {
	case tiers.StatusStored, tiers.StatusHit:
		f.finishTotal(tgt, 1)
		return
	case tiers.StatusMiss, tiers.StatusNotFound:
		if len(f.subs) == 1 {
			// A quiet incr found its part absent: whether the counter
			// exists takes the reads of the others.
			f.incrWithReads()
			return
		}
	default:
		f.finish(tgt)
		return
	}
	// The target part is absent. The counter exists if any other part
	// does: then the part is created holding the delta, with the base's
	// TTL. Otherwise the counter is absent, as memcached would say, unless
	// the client asked to create it.
	others, ttl := false, int64(0)
	for i := 1; i < len(f.subs); i++ {
		s := &f.subs[i].Res
		if s.Status == tiers.StatusError {
			f.finish(s)
			return
		}
		if s.Status == tiers.StatusHit {
			others = true
		}
	}
	if f.target != -1 && f.subs[1].Res.Status == tiers.StatusHit && f.subs[1].Res.TTL > 0 {
		ttl = f.subs[1].Res.TTL
	}
	pr := &f.parent.Req
	if !others && !pr.Vivify {
		f.finish(tgt)
		return
	}
	// Keep the reads of the other parts: the next round reuses subs[0].
	f.saveOthers()
	create := f.arithReq()
	create.Vivify = true
	create.Initial = f.send
	create.VivifyTTL = ttl
	if !others {
		create.Initial, create.VivifyTTL = pr.Initial, pr.VivifyTTL
	}
	f.round([]int{f.target}, &create, nil)
	f.issue(f.t.inner, (*fan).createDone)
}

// saveOthers sums the values read of every part but the target.
func (f *fan) saveOthers() {
	f.otherSum = 0
	for i := 1; i < len(f.subs); i++ {
		if s := &f.subs[i].Res; s.Status == tiers.StatusHit {
			n, _ := parseCount(s.Value)
			f.otherSum += n
		}
	}
}

func (f *fan) createDone() {
	tgt := &f.subs[0].Res
	if tgt.Status != tiers.StatusStored && tgt.Status != tiers.StatusHit {
		f.finish(tgt)
		return
	}
	n, _ := parseCount(tgt.Value)
	f.res.Reset()
	f.res.Status = tgt.Status
	f.res.Created = tgt.Created
	f.res.Value = strconv.AppendUint(f.res.Value, n+f.otherSum, 10)
	f.finish(&f.res)
}

// finishTotal answers an arithmetic request with the counter's total: the
// part it changed (subs[0]) plus the values read of subs[from:].
func (f *fan) finishTotal(tgt *tiers.Result, from int) {
	n, ok := parseCount(tgt.Value)
	if !ok {
		f.finish(tgt)
		return
	}
	for i := from; i < len(f.subs); i++ {
		s := &f.subs[i].Res
		if s.Status == tiers.StatusError {
			f.finish(s)
			return
		}
		if s.Status == tiers.StatusHit {
			v, ok := parseCount(s.Value)
			if !ok {
				// A non-numeric base: memcached would refuse the incr.
				f.res.Reset()
				f.res.Status = tiers.StatusNonNumeric
				f.finish(&f.res)
				return
			}
			n += v
		}
	}
	v := f.res.Value[:0]
	f.res = *tgt
	f.res.Value = strconv.AppendUint(v, n, 10)
	f.finish(&f.res)
}

// decrRead is the first round of a decr: read every part. The second
// takes the delta from the parts that hold value, largest first, each with
// memcached's own decr (which stops at 0). So the total never goes below
// 0 and no increment is ever undone; under concurrent decrs of one counter
// a decr may take less than asked (when another took the same value
// first), never more.
func (f *fan) decrRead() {
	f.round(f.allParts(), &tiers.Request{Kind: tiers.KindGet, WantValue: true, WantTTL: true}, nil)
	f.issue(f.t.inner, (*fan).decrApply)
}

type take struct {
	part int    // candidate number, -1 for the base
	n    uint64 // what to take from it
}

func (f *fan) decrApply() {
	pr := &f.parent.Req
	found := false
	f.takes = f.takes[:0]
	var total uint64
	for i := range f.subs {
		s := &f.subs[i].Res
		switch s.Status {
		case tiers.StatusError:
			f.finish(s)
			return
		case tiers.StatusHit:
			found = true
			n, ok := parseCount(s.Value)
			if !ok {
				if i == 0 {
					f.res.Reset()
					f.res.Status = tiers.StatusNonNumeric
					f.finish(&f.res)
					return
				}
				continue
			}
			total += n
			if n > 0 {
				f.takes = append(f.takes, take{part: f.partOf(i), n: n})
			}
		}
	}
	if !found {
		if pr.Vivify {
			// ma N on an absent counter creates it at Initial: on the base.
			f.round([]int{-1}, pr, nil)
			f.issue(f.t.inner, func(f *fan) { f.finish(&f.subs[0].Res) })
			return
		}
		f.finish(&f.subs[0].Res)
		return
	}
	sort.SliceStable(f.takes, func(a, b int) bool { return f.takes[a].n > f.takes[b].n })
	left := pr.Delta
	kept := total
	var parts []int
	var amounts []uint64
	for _, tk := range f.takes {
		if left == 0 {
			break
		}
		n := min(tk.n, left)
		left -= n
		kept -= tk.n
		parts = append(parts, tk.part)
		amounts = append(amounts, n)
	}
	f.otherSum = kept
	if len(parts) == 0 {
		f.t.stats.decrFloor.Add(1)
		f.res.Reset()
		f.res.Status = tiers.StatusStored
		f.res.Value = strconv.AppendUint(f.res.Value, 0, 10)
		f.finish(&f.res)
		return
	}
	if left > 0 {
		f.t.stats.decrFloor.Add(1)
	}
	dec := *pr
	dec.Vivify = false
	f.round(parts, &dec, nil)
	for i := range f.subs {
		f.subs[i].Req.Delta = amounts[i]
	}
	f.issue(f.t.inner, (*fan).decrDone)
}

func (f *fan) decrDone() {
	sum := f.otherSum
	var last *tiers.Result
	for i := range f.subs {
		s := &f.subs[i].Res
		switch s.Status {
		case tiers.StatusStored, tiers.StatusHit:
			n, _ := parseCount(s.Value)
			sum += n
			last = s
		case tiers.StatusError:
			f.finish(s)
			return
		}
		// A part that vanished since it was read holds nothing now.
	}
	f.res.Reset()
	f.res.Status = tiers.StatusStored
	if last != nil {
		f.res.Status = last.Status
	}
	f.res.Value = strconv.AppendUint(f.res.Value, sum, 10)
	f.finish(&f.res)
}
