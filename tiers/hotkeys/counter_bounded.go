package hotkeys

import (
	"strconv"
	"sync"

	"github.com/strata-cache/strata/tiers"
)

// The shell of bounded replies: the table of views, and the incr that
// answers from one (the decision is bounded.go's).

// boundedKeysMax bounds the views a strata keeps; past it, idle views are
// dropped, and an incr finding no room answers exactly.
const boundedKeysMax = 4096

// boundedTable holds the views of the counters under bounded rules.
type boundedTable struct {
	// mu guards keys, every boundedKey, and the wait, reply and ok fields
	// of the fans waiting on one. It is held for a few field updates,
	// never across I/O.
	mu   sync.Mutex
	keys map[string]*boundedKey
}

// viewLocked returns key's view, creating it (when there is room) if
// create.
func (bt *boundedTable) viewLocked(key []byte, now, staleness int64, create bool) *boundedKey {
	if b, ok := bt.keys[string(key)]; ok || !create {
		return b
	}
	if len(bt.keys) >= boundedKeysMax {
		for k, b := range bt.keys {
			if b.inflight == 0 && !b.refreshing && len(b.waiters) == 0 && (b.readAt == 0 || now-b.readAt >= staleness) {
				delete(bt.keys, k)
			}
		}
		if len(bt.keys) >= boundedKeysMax {
			return nil
		}
	}
	b := &boundedKey{}
	bt.keys[string(key)] = b
	return b
}

// read lets b take the exact total e a get read.
func (bt *boundedTable) read(b *boundedKey, e uint64, s snap) {
	bt.mu.Lock()
	b.read(e, s)
	bt.mu.Unlock()
}

// resetKey drops key's view, if any.
func (bt *boundedTable) resetKey(key []byte) {
	bt.mu.Lock()
	if b := bt.keys[string(key)]; b != nil {
		b.reset()
	}
	bt.mu.Unlock()
}

// boundedGet prepares a get of a counter under a bounded rule: its exact
// sum refreshes the view, when this strata has one.
func (f *fan) boundedGet() {
	now := f.t.cfg.Now()
	bt := &f.t.bounded
	bt.mu.Lock()
	if b := bt.viewLocked(f.base, now, f.rule.staleness(), false); b != nil {
		f.bkGet, f.bsnap = b, b.snapshot(now)
	}
	bt.mu.Unlock()
	if f.bkGet != nil {
		f.t.stats.boundedRefreshes.Add(1)
	}
}

// incrBounded serves an incr with a reply under a bounded rule: one
// operation on the own part, answered from the view (see bounded.go),
// with every other part read in the same round when the view needs a
// refresh.
func (f *fan) incrBounded() {
	quiet := f.parent.Req.NoReply
	now := f.t.cfg.Now()
	staleness := f.rule.staleness()
	bt := &f.t.bounded
	bt.mu.Lock()
	b := bt.viewLocked(f.base, now, staleness, true)
	if b == nil {
		bt.mu.Unlock()
		f.partNames(f.t.l2p)
		if quiet {
			f.incr()
			return
		}
		f.pickTarget(1)
		f.incrWithReads()
		return
	}
	// A noreply incr wants no reply: it neither refreshes nor waits, but
	// counts in the view and combines with the others.
	step := stepCached
	if !quiet {
		step = b.plan(now, staleness)
	}
	if step.refreshes() {
		f.bsnap = b.snapshot(now)
		f.withReads = true
	}
	f.bk, f.bstep, f.delta = b, step, f.parent.Req.Delta
	f.reply = b.issue(f.delta, step)
	f.wait = 1
	if step.waits() {
		b.waiters = append(b.waiters, f)
		f.wait = 2
	}
	bt.mu.Unlock()
	switch {
	case step == stepWait:
		f.t.stats.boundedWaits.Add(1)
	case step.refreshes():
		f.t.stats.boundedRefreshes.Add(1)
	}
	if f.withReads {
		f.partNames(f.t.l2p)
		f.pickTarget(1)
		f.incrWithReads()
		return
	}
	// incrDone reads every part (through incrWithReads) should the own
	// part be absent, and creates it.
	f.sendCombined()
}

// boundedReads is called as an incr's round starts reading every part: a
// bounded incr that did not plan to (its part was absent) snapshots the
// view, so that its exact reading refreshes it too.
func (f *fan) boundedReads() {
	if f.bk == nil || f.withReads {
		return
	}
	bt := &f.t.bounded
	bt.mu.Lock()
	f.bsnap = f.bk.snapshot(f.t.cfg.Now())
	bt.mu.Unlock()
	f.withReads = true
}

// boundedFinish is where a bounded incr's rounds end, with res: the
// exact total when the rounds read every part, else the own part's new
// value, or the failure. The view is updated; the incr, and the incrs
// that waited for its refresh, are answered once they have both their
// own acknowledgement and, if they wait, the refresh.
func (f *fan) boundedFinish(res *tiers.Result) {
	f.combinedDone(res)
	if res != &f.res {
		v := f.res.Value[:0]
		f.res = *res
		f.res.Value = append(v, res.Value...)
	}
	ok := f.res.Status == tiers.StatusStored || f.res.Status == tiers.StatusHit
	var e uint64
	if ok && f.withReads {
		e, ok = parseCount(f.res.Value)
	}
	var ready [8]*fan
	woken := ready[:0]
	bt := &f.t.bounded
	b := f.bk
	bt.mu.Lock()
	if f.bstep.refreshes() {
		r := b.refreshed(e, f.bsnap, ok)
		for _, w := range b.waiters {
			w.reply = r
			if w.wait--; w.wait == 0 {
				woken = append(woken, w)
			}
		}
		clear(b.waiters)
		b.waiters = b.waiters[:0]
	} else if ok && f.withReads {
		b.read(e, f.bsnap)
	}
	b.acked(f.delta, ok)
	f.ok = ok
	if f.wait--; f.wait == 0 {
		woken = append(woken, f)
	}
	bt.mu.Unlock()
	// f may be among woken, last: once answered it is released.
	t, loop := f.t, f.loop
	for _, w := range woken {
		if w.loop == loop {
			w.answerBounded()
		} else {
			t.runOn(w.loop, w.answerBounded)
		}
	}
}

// answerBounded completes a bounded incr: with its reply, or with its own
// failure. It runs on the incr's loop.
func (f *fan) answerBounded() {
	f.bk = nil
	if f.ok {
		f.res.Value = strconv.AppendUint(f.res.Value[:0], f.reply, 10)
		if !f.parent.Req.NoReply {
			f.t.stats.boundedReplies.Add(1)
		}
	}
	f.finish(&f.res)
}
