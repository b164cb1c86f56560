package placement

import (
	"cmp"
	"math/rand/v2"
	"slices"
)

// searcher runs the local search over a state. Every decision draws from
// rng, seeded by Options.Seed, and iterates in index order, so a run is a
// pure function of its inputs while the budget is in steps.
type searcher struct {
	st        *state
	rng       *rand.Rand
	steps     int64
	exhausted bool

	cand  []int32   // sampled candidate servers, reused
	order []int32   // slots of the server being relieved, reused
	gain  []float64 // what each slot of that server fixes, by list position
	later []float64 // what it fixes of the load goals after the phase's
	work  []int32   // violators of the current phase, reused
	hot   []bool    // per metric: the server being swapped from is hot
}

// swapTop is how many of a hot server's slots a scan or a swap considers
// once sampling found nothing: the largest, which fix the most per move.
const swapTop = 8

func newSearcher(st *state) *searcher {
	return &searcher{st: st, rng: rand.New(rand.NewPCG(st.o.Seed, 0x9e3779b97f4a7c15))}
}

// tick spends one step and reports whether the search may go on.
func (sr *searcher) tick() bool {
	if sr.exhausted {
		return false
	}
	sr.steps++
	o := sr.st.o
	if sr.steps >= o.MaxSteps {
		sr.exhausted = true
	} else if o.Now != nil && sr.steps&4095 == 0 && !o.Now().Before(o.Deadline) {
		sr.exhausted = true
	}
	return !sr.exhausted
}

// sample appends k servers drawn uniformly from pool to sr.cand.
func (sr *searcher) sample(pool []int32, k int) {
	if len(pool) == 0 {
		return
	}
	if len(pool) <= k {
		sr.cand = append(sr.cand, pool...)
		return
	}
	for i := 0; i < k; i++ {
		sr.cand = append(sr.cand, pool[sr.rng.IntN(len(pool))])
	}
}

// dedupe drops repeated candidates (sampling is with replacement, and a
// small pool is taken whole), so no server is evaluated twice.
func (sr *searcher) dedupe() {
	slices.Sort(sr.cand)
	sr.cand = slices.Compact(sr.cand)
}

// choice is the best move found so far for one decision.
type choice struct {
	slot, to int32
	d        delta
	ok       bool
}

func (c *choice) offer(r, b int32, d *delta) {
	if !c.ok || d.less(&c.d) {
		*c = choice{slot: r, to: b, d: *d, ok: true}
	}
}

// accept says whether a move with change d may serve phase g.
func (sr *searcher) accept(d *delta, g Goal) bool {
	if sr.st.o.Mode == Emergency {
		return d.g[GoalUnplaced].c < 0
	}
	return d.improves(g) && (g == GoalUnplaced || !d.hitsUpTo(g))
}

// tryTargets evaluates slot r against each server of cands and offers the
// acceptable moves to best.
func (sr *searcher) tryTargets(r int32, cands []int32, g Goal, best *choice) {
	st := sr.st
	for _, b := range cands {
		if !sr.tick() {
			return
		}
		d, ok := st.evalMove(r, b, true)
		if !ok || !sr.accept(&d, g) {
			continue
		}
		if st.o.Mode == Emergency {
			// Only the hard constraints bind. Among the servers they allow,
			// the cheap tie-breaks: the preferred region, a zone the shard
			// lacks, a server that took none of the same dead server's
			// replicas yet, then the roomiest. The load goals are left to
			// the periodic pass.
			d = delta{g: [NumGoals]term{
				GoalRegion:         d.g[GoalRegion],
				GoalZone:           d.g[GoalZone],
				GoalFailoverSpread: d.g[GoalFailoverSpread],
			}, head: d.head}
		}
		best.offer(r, b, &d)
	}
}

// pools returns where slot r may look for a server in phase g: first the
// pool to sample, then the wider one to fall back on (nil: none).
func (sr *searcher) pools(r int32, g Goal) (near, wide []int32) {
	st := sr.st
	a := st.at[r]
	p := st.pref[st.slotShard[r]]
	switch {
	case p >= 0 && (a < 0 || g == GoalRegion || st.region[a] == p):
		// Staying in (or reaching) the preferred region; a replica with no
		// server may leave it when the region is full.
		if a < 0 {
			return st.eligibleBy[p], st.eligibleAll
		}
		return st.eligibleBy[p], nil
	case a >= 0 && (g == GoalRegionalBalance || g == GoalFailoverSpread):
		return st.eligibleBy[st.region[a]], nil
	case a >= 0:
		return st.eligibleBy[st.region[a]], st.eligibleAll
	}
	return st.eligibleAll, nil
}

// placeSlot finds and applies the best move of slot r for phase g:
// sampled candidates first, then a scan of the near pool, then the wide.
func (sr *searcher) placeSlot(r int32, g Goal) bool {
	near, wide := sr.pools(r, g)
	k := sr.st.o.Samples
	sr.cand = sr.cand[:0]
	if wide != nil && len(near) < len(wide) {
		sr.sample(near, k/2)
		sr.sample(wide, k-k/2)
	} else {
		sr.sample(near, k)
	}
	sr.dedupe()
	var best choice
	sr.tryTargets(r, sr.cand, g, &best)
	if !best.ok {
		sr.tryTargets(r, near, g, &best)
	}
	if !best.ok && wide != nil {
		sr.tryTargets(r, wide, g, &best)
	}
	if !best.ok {
		return false
	}
	sr.st.commit(best.slot, best.to)
	sr.st.endStep()
	return true
}

// fixSlots is a phase over replicas: unplaced, region, zone, spread.
func (sr *searcher) fixSlots(g Goal) bool {
	st := sr.st
	sr.work = sr.work[:0]
	for r := range st.at {
		if st.slotViolates(int32(r), g) {
			sr.work = append(sr.work, int32(r))
		}
	}
	sr.sortBySize(sr.work)
	progress := false
	for _, r := range sr.work {
		if sr.exhausted {
			break
		}
		if st.slotViolates(r, g) && sr.placeSlot(r, g) {
			progress = true
		}
	}
	return progress
}

// sortBySize orders slots largest first (Shard Manager's "large shards
// first": they fix the most per move), ties by id.
func (sr *searcher) sortBySize(slots []int32) {
	st := sr.st
	slices.SortFunc(slots, func(x, y int32) int {
		sx, sy := st.shSize[st.slotShard[x]], st.shSize[st.slotShard[y]]
		if c := cmp.Compare(sy, sx); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
}

// fixServers is a phase over servers: capacity, drain, utilisation,
// balance and regional balance. The worst server goes first; each is
// relieved until it is clean or nothing acceptable is left.
func (sr *searcher) fixServers(g Goal) bool {
	st := sr.st
	sr.work = sr.work[:0]
	excess := make([]float64, st.nSrv)
	for s := 0; s < st.nSrv; s++ {
		if e := st.serverExcess(int32(s), g); e > 0 {
			excess[s] = e
			sr.work = append(sr.work, int32(s))
		}
	}
	slices.SortFunc(sr.work, func(x, y int32) int {
		if c := cmp.Compare(excess[y], excess[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	progress := false
	for _, h := range sr.work {
		for !sr.exhausted && st.serverExcess(h, g) > 0 {
			if !sr.relieve(h, g) {
				break
			}
			progress = true
		}
	}
	return progress
}

// relieve applies one move (or swap) that takes load off server h for
// goal g. Slots are tried in the order of what they fix at h (most first,
// then the smallest, which lands easiest); the first slot with an
// acceptable target among the samples wins.
func (sr *searcher) relieve(h int32, g Goal) bool {
	st := sr.st
	sr.order = append(sr.order[:0], st.list[h]...)
	gain, later := sr.sourceGains(h, g)
	// Among slots that fix g equally, the one that also fixes the most of
	// the later load goals saves a move there; then, when relieving load,
	// the smallest (it lands easiest), and when draining the largest
	// (largest first packs best).
	sizeOrder := 1
	if g == GoalDrain {
		sizeOrder = -1
	}
	order := func(x, y int32) int {
		px, py := st.pos[x], st.pos[y]
		if c := cmp.Compare(gain[px], gain[py]); c != 0 {
			return -c
		}
		if c := cmp.Compare(later[px], later[py]); c != 0 {
			return -c
		}
		sx, sy := st.shSize[st.slotShard[x]], st.shSize[st.slotShard[y]]
		if c := cmp.Compare(sx, sy); c != 0 {
			return sizeOrder * c
		}
		return cmp.Compare(x, y)
	}
	// The first slot usually finds a target among the samples: put it
	// first in one pass and sort the rest only if it does not.
	if first := slices.MinFunc(sr.order, order); first != sr.order[0] {
		i := slices.Index(sr.order, first)
		sr.order[0], sr.order[i] = sr.order[i], sr.order[0]
	}
	sorted := false
	k := st.o.Samples
	reg := st.region[h]
	sr.cand = sr.cand[:0]
	wide := g != GoalRegionalBalance
	if wide && st.nRegions > 1 {
		sr.sample(st.eligibleBy[reg], k/2)
		sr.sample(st.eligibleAll, k-k/2)
	} else if wide {
		sr.sample(st.eligibleAll, k)
	} else {
		sr.sample(st.eligibleBy[reg], k)
	}
	sr.dedupe()
	for i, r := range sr.order {
		if i == 1 && !sorted {
			slices.SortFunc(sr.order[1:], order)
			sorted = true
			r = sr.order[1]
		}
		if gain[st.pos[r]] <= 0 {
			break
		}
		var best choice
		sr.tryTargets(r, sr.cand, g, &best)
		if best.ok {
			st.commit(best.slot, best.to)
			st.endStep()
			return true
		}
	}
	// Sampling found nothing: scan for the largest few, then swap.
	if !sorted {
		slices.SortFunc(sr.order[1:], order)
	}
	top := sr.order[:min(len(sr.order), swapTop)]
	for _, r := range top {
		if gain[st.pos[r]] <= 0 {
			break
		}
		var best choice
		near, wideP := sr.pools(r, g)
		sr.tryTargets(r, near, g, &best)
		if !best.ok && wideP != nil && wide {
			sr.tryTargets(r, wideP, g, &best)
		}
		if best.ok {
			st.commit(best.slot, best.to)
			st.endStep()
			return true
		}
	}
	if g == GoalDrain {
		return false // a swap would put load back on the draining server
	}
	return sr.swap(h, g, top)
}
