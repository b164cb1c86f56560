package hotkeys

import "github.com/strata-cache/strata/tiers"

// Combining the increments of a counter under a bounded rule: on one
// event loop, at most one incr of the counter is in flight to the
// servers; the incrs that arrive meanwhile wait, and go together as ONE
// incr of their summed delta when it completes. A pipelined client's
// batch, and the batches of every connection the loop serves, then cost
// the servers one operation instead of one per increment.
//
// Why it is safe: a bounded reply comes from the strata's view
// (bounded.go), fixed at the incr's issue in issue order, not from the
// part's new value; what the combined operation decides for each member
// is only whether its increment landed. It lands for all or for none:
// every member shares the one outcome (the failure included; nothing is
// sent again but the one retry with reads an absent part takes, with the
// summed delta). memcached's incr wraps at 2^64, so one incr of the sum
// taken modulo 2^64 leaves the part where the members one by one would.

// combiner is the decision for one counter on one event loop. T is the
// member (a *fan in the shell; an int in tests). It owns no goroutine and
// takes no lock: only its loop touches it.
//
// Invariant: queued is empty while busy is false; sum is the sum, modulo
// 2^64, of the deltas of queued.
type combiner[T any] struct {
	busy   bool // a combined incr is in flight
	queued []T  // in arrival order
	sum    uint64
}

// join offers member m with its delta. It returns true when m goes now,
// alone (nothing was in flight; the combiner is busy from then on), and
// false when m waits for the incr in flight to complete.
func (c *combiner[T]) join(m T, delta uint64) bool {
	if !c.busy {
		c.busy = true
		return true
	}
	c.queued = append(c.queued, m)
	c.sum += delta // wraps as memcached's incr does
	return false
}

// next is called when the incr in flight completed (whatever its
// outcome). It appends to dst the members that go next, together, as one
// incr of the returned delta, and stays busy; with none waiting it
// returns dst unchanged and the combiner is idle.
func (c *combiner[T]) next(dst []T) ([]T, uint64) {
	if len(c.queued) == 0 {
		c.busy = false
		return dst, 0
	}
	dst = append(dst, c.queued...)
	sum := c.sum
	clear(c.queued)
	c.queued, c.sum = c.queued[:0], 0
	return dst, sum
}

// idle says that nothing is in flight or waiting: the combiner may be
// dropped.
func (c *combiner[T]) idle() bool { return !c.busy }

// combinersMax bounds the idle combiners a loop keeps for reuse.
const combinersMax = 64

// combinable says whether an incr may share another's operation: a text
// incr (with or without noreply) carries nothing but its key and delta.
// Meta arithmetic, with its flags (vivify, TTL, CAS), goes alone.
func combinable(f *fan) bool {
	r := &f.parent.Req
	return r.Text && !r.Vivify && !r.HasTTL && !r.HasCompareCAS && !r.WantCAS
}

// sendCombined issues f's increment through its loop's combiner of the
// counter: now, or with the next combined incr once the one in flight
// completes (boundedFinish hands the outcome to every member and sends
// the next).
func (f *fan) sendCombined() {
	ls := f.t.loop(f.loop)
	if ls == nil || !combinable(f) {
		f.sendIncr()
		return
	}
	c := ls.combining[string(f.base)]
	if c == nil {
		if n := len(ls.spare); n > 0 {
			c, ls.spare = ls.spare[n-1], ls.spare[:n-1]
		} else {
			c = &combiner[*fan]{}
		}
		if ls.combining == nil {
			ls.combining = map[string]*combiner[*fan]{}
		}
		ls.combining[string(f.base)] = c
	}
	if !c.join(f, f.delta) {
		f.t.stats.boundedCombined.Add(1)
		return
	}
	f.comb = c
	f.sendIncr()
}

// sendIncr sends f.send to f's part (the next in its loop's rotation),
// one operation; incrDone takes over should the part be absent.
func (f *fan) sendIncr() {
	f.pickTarget(1)
	arith := f.arithReq()
	arith.NoReply = false // the members may want replies, and the outcome
	f.round([]int{f.target}, &arith, nil)
	f.issue(f.t.inner, (*fan).incrDone)
}

// arithReq is the parent's increment as f sends it: with the summed
// delta of the members f leads, and never creating the item (incrDone
// creates an absent part itself).
func (f *fan) arithReq() tiers.Request {
	a := f.parent.Req
	a.Delta = f.send
	a.Vivify = false
	return a
}

// combinedDone is called once f's operation completed with res, before f
// is answered: every member f carried takes the same outcome, and the
// members waiting go next, led by the first of them.
func (f *fan) combinedDone(res *tiers.Result) {
	for _, m := range f.members {
		m.boundedFinish(res)
	}
	clear(f.members)
	f.members = f.members[:0]
	c := f.comb
	if c == nil {
		return
	}
	f.comb = nil
	ls := f.t.loop(f.loop)
	next, sum := c.next(ls.nextBuf[:0])
	ls.nextBuf = next[:0]
	if len(next) == 0 {
		if ls.combining[string(f.base)] == c {
			delete(ls.combining, string(f.base))
		}
		if len(ls.spare) < combinersMax {
			ls.spare = append(ls.spare, c)
		}
		return
	}
	lead := next[0]
	lead.comb = c
	lead.send = sum
	lead.members = append(lead.members[:0], next[1:]...)
	clear(next)
	lead.sendIncr()
}
