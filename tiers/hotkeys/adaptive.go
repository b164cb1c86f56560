package hotkeys

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/hotkeys/heavy"
)

// scanEvery is how often each event loop publishes what its detector sees
// and refreshes the marks: rare enough to cost nothing per request.
const scanEvery = int64(time.Second)

// topPerLoop is how many keys of each detector a scan publishes.
const topPerLoop = 32

// loopState is what one event loop owns. Only that loop's goroutine
// touches reads, writes, tick and nextScan; view is published for others.
type loopState struct {
	reads, writes *heavy.Detector
	tick          uint32
	nextScan      int64
	rr            atomic.Uint32 // rotation over parts (read by fan on the same loop)
	// names caches part names by key (and the placer they were spread
	// over); see fan.partNames.
	names   map[string][]int
	namesOf map[string]Placer
	// combining holds the combiners of the counters this loop sent bounded
	// incrs of (combine.go); nextBuf the members of the round's incr.
	combining map[string]*pending
	nextBuf   []*fan
	view      atomic.Pointer[loopView]
}

// loopView is one loop's heaviest keys at a scan.
type loopView struct {
	at            int64
	reads, writes []heavy.Hitter
}

func (t *Tier) loop(i int) *loopState {
	if i < 0 || i >= maxLoops {
		return nil
	}
	return &t.loops[i]
}

// observe feeds one access in cfg.Sample to the loop's detector and, once
// a second, scans. It runs on op's loop and takes no lock but the marks
// store's, once a second.
func (t *Tier) observe(op *tiers.Op, r *Rule, write bool) {
	ls := t.loop(op.Loop)
	if ls == nil {
		return
	}
	ls.tick++
	if ls.tick < uint32(t.cfg.Sample) {
		return
	}
	ls.tick = 0
	now := t.cfg.Now()
	if ls.reads == nil {
		hl := int64(t.cfg.HalfLife)
		ls.reads, _ = heavy.New(t.cfg.Counters, hl, now)
		ls.writes, _ = heavy.New(t.cfg.Counters, hl, now)
		ls.nextScan = now + scanEvery
	}
	d := ls.reads
	if write {
		d = ls.writes
	}
	d.Add(op.Req.Key, float64(t.cfg.Sample), now)
	if now >= ls.nextScan {
		ls.nextScan = now + scanEvery
		ls.names, ls.namesOf = nil, nil
		t.scan(ls, now)
	}
}

// scan publishes the loop's view, decides the marks from every loop's
// latest view, and refreshes the marks the data path reads.
func (t *Tier) scan(ls *loopState, now int64) {
	ls.view.Store(&loopView{
		at:     now,
		reads:  ls.reads.Top(nil, topPerLoop, now),
		writes: ls.writes.Top(nil, topPerLoop, now),
	})
	merged := t.merged()
	t.near.setHot(decideNear(merged, t.rules.Load(), t.cfg.Rate))
	if marks := decide(merged, t.rules.Load(), t.cfg.Rate, now); len(marks) > 0 {
		t.marks.Publish(marks)
		t.stats.marksPublished.Add(uint64(len(marks)))
	}
	t.refreshMarks(now)
}

// refreshMarks copies the store's marks into the set the data path reads.
func (t *Tier) refreshMarks(now int64) {
	list := t.marks.Marks(now)
	ms := &markSet{byKey: make(map[string]Mark, len(list))}
	for _, m := range list {
		ms.byKey[m.Key] = m
	}
	t.marked.Store(ms)
}

// keyRates is one key's rates summed over loops.
type keyRates struct {
	key           string
	reads, writes float64 // lower bounds, accesses per second
}

// merged sums the latest view of every loop by key. Views older than a
// few scans are from loops gone quiet and count as nothing.
func (t *Tier) merged() []keyRates {
	idx := map[string]int{}
	var out []keyRates
	add := func(h heavy.Hitter, write bool) {
		i, ok := idx[h.Key]
		if !ok {
			i = len(out)
			idx[h.Key] = i
			out = append(out, keyRates{key: h.Key})
		}
		if write {
			out[i].writes += h.RateLow
		} else {
			out[i].reads += h.RateLow
		}
	}
	for i := range t.loops {
		v := t.loops[i].view.Load()
		if v == nil {
			continue
		}
		for _, h := range v.reads {
			add(h, false)
		}
		for _, h := range v.writes {
			add(h, true)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].key < out[b].key })
	return out
}

// decide is the adaptive policy, a pure function: a key under an adaptive
// rule is hot at now when its rate (writes for counter and list rules,
// reads for read rules) reaches rate.
func decide(keys []keyRates, rs *ruleSet, rate float64, now int64) []Mark {
	var out []Mark
	for _, k := range keys {
		r := rs.match([]byte(k.key))
		if r == nil || !r.Adaptive {
			continue
		}
		v := k.writes
		if r.Kind == KindRead {
			v = k.reads
		}
		if v >= rate {
			out = append(out, Mark{Key: k.key, Kind: r.Kind, K: r.Split, Since: now, Seen: now})
		}
	}
	return out
}
