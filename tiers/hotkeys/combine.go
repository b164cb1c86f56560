package hotkeys

import "github.com/strata-cache/strata/tiers"

// Combining the increments of a counter under a bounded rule: the incrs
// of one counter that one event loop receives in one round (every client
// connection whose bytes arrived in that poll) wait until the round's
// callbacks are done, and go to the servers as ONE incr of their summed
// delta. A pipelined client's batch, and the batches of every connection
// the loop serves, then cost the servers one operation instead of one per
// increment, and no incr waits longer than the round it arrived in.
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
// Invariant: sum is the sum, modulo 2^64, of the deltas of queued.
type combiner[T any] struct {
	queued []T // in arrival order
	sum    uint64
}

// join queues member m with its delta. It returns true for the first
// member of a round: the caller then schedules take for the round's end.
func (c *combiner[T]) join(m T, delta uint64) bool {
	c.queued = append(c.queued, m)
	c.sum += delta // wraps as memcached's incr does
	return len(c.queued) == 1
}

// take ends the round: it appends the queued members to dst, to go
// together as one incr of the returned delta, and empties the combiner.
func (c *combiner[T]) take(dst []T) ([]T, uint64) {
	dst = append(dst, c.queued...)
	sum := c.sum
	clear(c.queued)
	c.queued, c.sum = c.queued[:0], 0
	return dst, sum
}

// pending is one loop's combiner for one counter, with its end-of-round
// function bound once.
type pending struct {
	c   combiner[*fan]
	end func()
}

// combinersMax bounds the counters a loop keeps a combiner for; past it,
// the idle ones are dropped.
const combinersMax = 4096

// combinable says whether an incr may share another's operation: a text
// incr (with or without noreply) carries nothing but its key and delta.
// Meta arithmetic, with its flags (vivify, TTL, CAS), goes alone; so does
// every incr when the inner tier answers within Do (nothing to save).
func combinable(f *fan) bool {
	r := &f.parent.Req
	return f.t.async && r.Text && !r.Vivify && !r.HasTTL && !r.HasCompareCAS && !r.WantCAS
}

// sendCombined queues f's increment in its loop's combiner of the
// counter; the first of a round schedules the round's end (endRound) on
// the loop, through the executor, which runs it once the round's
// callbacks are done.
func (f *fan) sendCombined() {
	ls := f.t.loop(f.loop)
	if ls == nil || !combinable(f) {
		f.sendIncr()
		return
	}
	p := ls.combining[string(f.base)]
	if p == nil {
		if len(ls.combining) >= combinersMax {
			for k, q := range ls.combining {
				if len(q.c.queued) == 0 {
					delete(ls.combining, k)
				}
			}
		}
		if ls.combining == nil {
			ls.combining = map[string]*pending{}
		}
		p = &pending{}
		t, loop := f.t, f.loop
		p.end = func() { t.endRound(loop, p) }
		ls.combining[string(f.base)] = p
	}
	if !p.c.join(f, f.delta) {
		f.t.stats.boundedCombined.Add(1)
		return
	}
	f.t.runOn(f.loop, p.end)
}

// endRound sends the incrs p gathered in a round as one, led by the
// first of them. It runs on the loop.
func (t *Tier) endRound(loop int, p *pending) {
	ls := t.loop(loop)
	members, sum := p.c.take(ls.nextBuf[:0])
	ls.nextBuf = members[:0]
	if len(members) == 0 {
		return
	}
	lead := members[0]
	lead.send = sum
	lead.members = append(lead.members[:0], members[1:]...)
	clear(members)
	lead.sendIncr()
}

// sendIncr sends f.send to f's part (the next in its loop's rotation),
// one operation; incrDone takes over should the part be absent.
func (f *fan) sendIncr() {
	f.partNames(f.t.l2p)
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
// is answered: every member f carried takes the same outcome.
func (f *fan) combinedDone(res *tiers.Result) {
	for _, m := range f.members {
		m.boundedFinish(res)
	}
	clear(f.members)
	f.members = f.members[:0]
}
