package locality

import (
	"time"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// loopState is what one event loop owns; only that loop touches it
// (Stats reads the cache's atomic counters).
type loopState struct {
	idx     int
	cache   *loccache.Cache
	names   nameCache
	pending map[string]*resolving // μ-shard name → the lookup its requests wait for
	free    []*task
}

// maxFreeTasks bounds the tasks a loop keeps for reuse.
const maxFreeTasks = 256

func (ls *loopState) task(t *Tier) *task {
	if n := len(ls.free); n > 0 {
		tk := ls.free[n-1]
		ls.free = ls.free[:n-1]
		return tk
	}
	tk := &task{t: t, ls: ls, rules: t.handoffRules()}
	tk.sub.Loop = ls.idx
	tk.sub.Done = tk.next
	return tk
}

func (ls *loopState) recycle(tk *task) {
	tk.client = nil
	tk.id = keyrule.ID{}
	tk.sub.Req = tkZeroReq
	if len(ls.free) < maxFreeTasks {
		ls.free = append(ls.free, tk)
	}
}

// nameCache remembers the names of recent μ-shards, so that counting an
// access (Directory.Access takes a string) costs no allocation for a
// μ-shard seen before. Direct-mapped by hash: a collision costs one
// allocation, never a wrong name.
type nameCache struct {
	slots [nameSlots]nameSlot
}

const nameSlots = 1024

type nameSlot struct {
	h    uint64
	rule int
	name string
}

func (nc *nameCache) get(rs *keyrule.Rules, h uint64, id keyrule.ID) string {
	s := &nc.slots[h&(nameSlots-1)]
	if s.name != "" && s.h == h && s.rule == id.Rule && nameHasField(s.name, id.Field) {
		return s.name
	}
	s.h, s.rule, s.name = h, id.Rule, rs.Name(id)
	return s.name
}

// nameHasField reports whether name ("prefix field") ends in " "+field
// after its first space. The rule is compared by the caller, so the
// prefix part matches.
func nameHasField(name string, field []byte) bool {
	i := 0
	for i < len(name) && name[i] != ' ' {
		i++
	}
	return i < len(name) && name[i+1:] == string(field)
}

// resolving is one location lookup in flight on a loop, and the requests
// that wait for it, in arrival order. All requests of a μ-shard without a
// cached location join it, so they resume in order, in one callback,
// right after the location is cached: none can overtake another.
type resolving struct {
	name string
	id   keyrule.ID // Field owned (a copy)
	h    uint64
	// fresh: the lookup in flight bypasses caches; wantFresh: a waiter
	// needs one, so a cached answer is followed by a fresh lookup.
	fresh, wantFresh bool
	gen              uint64 // tells this lookup's answer from a timed-out one's
	timer            *time.Timer
	waiters          []*task
}

// resolve parks tk until its μ-shard's location is read (fresh: bypassing
// caches).
func (tk *task) resolve(fresh bool) {
	ls, t := tk.ls, tk.t
	p := ls.pending[tk.name]
	if p != nil {
		if fresh && !p.fresh {
			p.wantFresh = true
		}
		p.waiters = append(p.waiters, tk)
		return
	}
	p = &resolving{name: tk.name, id: keyrule.ID{Rule: tk.id.Rule, Field: append([]byte(nil), tk.id.Field...)}, h: tk.h}
	p.waiters = append(p.waiters, tk)
	ls.pending[tk.name] = p
	t.lookup(ls, p, fresh)
}

// lookup starts p's read, bounded by ForwardTimeout.
func (t *Tier) lookup(ls *loopState, p *resolving, fresh bool) {
	p.fresh = fresh
	p.gen++
	gen, loop := p.gen, ls.idx
	p.timer = time.AfterFunc(t.cfg.ForwardTimeout, func() {
		t.runOn(loop, func() { t.resolved(ls, p, gen, loccache.Location{}, ErrUnknownLocation) })
	})
	t.dir.Resolve(p.name, fresh, func(loc loccache.Location, err error) {
		t.runOn(loop, func() { t.resolved(ls, p, gen, loc, err) })
	})
}

// resolved runs on the loop with a lookup's answer (or its timeout):
// caches it and resumes the waiters in order.
func (t *Tier) resolved(ls *loopState, p *resolving, gen uint64, loc loccache.Location, err error) {
	if ls.pending[p.name] != p || p.gen != gen {
		return // answered already, or superseded
	}
	p.timer.Stop()
	if err == nil {
		t.observe(p.name, loc)
		ls.cache.Put(p.h, p.id, loc)
		if cur, ok := ls.cache.Peek(p.h, p.id); ok {
			loc = cur // a newer view arrived meanwhile
		}
		if p.wantFresh && !p.fresh {
			p.wantFresh = false
			t.lookup(ls, p, true)
			return
		}
	}
	delete(ls.pending, p.name)
	for i, tk := range p.waiters {
		p.waiters[i] = nil
		if err != nil {
			tk.unresolved(err)
			continue
		}
		tk.reread = tk.reread || p.fresh
		tk.route(loc)
	}
}
