package placement

// Solve computes a new assignment for p. It is a pure function: no
// goroutines, no I/O, no clock unless Options.Now is given, no global
// randomness. See the package documentation for the contract.
func Solve(p *Problem, o Options) (*Result, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	if err := o.validate(p); err != nil {
		return nil, err
	}
	st := newState(p, &o)
	return solve(st), nil
}

func solve(st *state) *Result {
	res := &Result{Before: st.report(), MinMoves: st.minMoves()}
	sr := newSearcher(st)
	if st.o.Mode == Emergency {
		sr.fixSlots(GoalUnplaced)
	} else {
		sr.periodic()
	}
	res.After = st.report()
	res.Steps = sr.steps
	res.Exhausted = sr.exhausted
	st.fill(res)
	return res
}

// periodicRounds bounds the passes over all goals. A later goal's moves
// can open room for an earlier goal that found none (never the reverse:
// they worsen no earlier goal), so one more pass is worth its cost.
const periodicRounds = 2

// periodic fixes goal by goal in priority order, as Shard Manager batches
// its goals: each phase only looks at its own violators, and its moves
// worsen no earlier goal.
func (sr *searcher) periodic() {
	for round := 0; round < periodicRounds; round++ {
		progress := false
		for g := Goal(0); g < NumGoals && !sr.exhausted; g++ {
			var p bool
			if slotGoal(g) {
				p = sr.fixSlots(g)
			} else {
				p = sr.fixServers(g)
			}
			progress = progress || p
		}
		if !progress || sr.exhausted {
			return
		}
	}
}

func slotGoal(g Goal) bool {
	switch g {
	case GoalUnplaced, GoalRegion, GoalZone, GoalFailoverSpread:
		return true
	}
	return false
}

// slotViolates reports whether slot r is itself a violation of slot goal g.
func (st *state) slotViolates(r int32, g Goal) bool {
	a := st.at[r]
	if g == GoalUnplaced {
		return a < 0
	}
	if a < 0 {
		return false
	}
	sh := int(st.slotShard[r])
	switch g {
	case GoalRegion:
		p := st.pref[sh]
		return p >= 0 && st.region[a] != p
	case GoalZone:
		if st.repOff[sh+1]-st.repOff[sh] < 2 {
			return false
		}
		for j := st.repOff[sh]; j < st.repOff[sh+1]; j++ {
			if j != r && st.at[j] >= 0 && st.zone[st.at[j]] == st.zone[a] {
				return st.zoneExcess(sh, -1, -1) > 0
			}
		}
	case GoalFailoverSpread:
		o := st.origin[r]
		return o >= 0 && st.deadOn(o, a) > st.spreadCap[o]
	}
	return false
}

// loadThr is the threshold of load goal g for metric k on server s, or -1
// when g is no load goal.
func (st *state) loadThr(s int32, g Goal, k int) float64 {
	switch g {
	case GoalCapacity:
		return 1
	case GoalUtilization:
		return st.o.Utilization
	case GoalBalance:
		return st.balThr[k]
	case GoalRegionalBalance:
		if st.regions < 2 {
			return -1 // one region: the global goal says it all
		}
		return st.regThr(st.region[s], k)
	}
	return -1
}

// serverExcess is how much server s violates server goal g (0: clean).
func (st *state) serverExcess(s int32, g Goal) float64 {
	if !st.alive[s] {
		return 0
	}
	if g == GoalDrain {
		if st.draining[s] {
			return float64(len(st.list[s]))
		}
		return 0
	}
	m := st.m
	e := 0.0
	for k := 0; k < m; k++ {
		thr := st.loadThr(s, g, k)
		if thr < 0 {
			return 0
		}
		_, x := excessOver(st.load[int(s)*m+k]/st.cap[int(s)*m+k], thr)
		e += x
	}
	return e
}

// sourceGains fills sr.gain, by position in list[h], with how much of goal
// g's excess at h each slot's departure removes, and sr.later with how
// much it removes of the load goals after g.
func (sr *searcher) sourceGains(h int32, g Goal) (gain, later []float64) {
	st := sr.st
	m := st.m
	sr.gain, sr.later = sr.gain[:0], sr.later[:0]
	for _, r := range st.list[h] {
		sh := int(st.slotShard[r])
		now, next := 0.0, 0.0
		if g == GoalDrain {
			now = 1
		}
		for k := 0; k < m; k++ {
			c := st.cap[int(h)*m+k]
			before := st.load[int(h)*m+k] / c
			after := (st.load[int(h)*m+k] - st.shLoad[sh*m+k]) / c
			for x := max(g, GoalCapacity); x <= GoalRegionalBalance; x++ {
				thr := st.loadThr(h, x, k)
				if thr < 0 {
					continue
				}
				_, eb := excessOver(before, thr)
				_, ea := excessOver(after, thr)
				if x == g {
					now += eb - ea
				} else {
					next += eb - ea
				}
			}
		}
		sr.gain = append(sr.gain, now)
		sr.later = append(sr.later, next)
	}
	return sr.gain, sr.later
}

// hitBits returns the load goals up to g that server s violates after its
// load changes by sign × the load of shard sh.
func (st *state) hitBits(s int32, sh int, sign float64, g Goal) uint32 {
	m := st.m
	var bits uint32
	for k := 0; k < m; k++ {
		u := (st.load[int(s)*m+k] + sign*st.shLoad[sh*m+k]) / st.cap[int(s)*m+k]
		for h := GoalCapacity; h <= g && h <= GoalRegionalBalance; h++ {
			if thr := st.loadThr(s, h, k); thr >= 0 {
				if c, _ := excessOver(u, thr); c > 0 {
					bits |= 1 << uint(h)
				}
			}
		}
	}
	return bits
}

// swap looks for a two-way exchange when no single move relieves h: a
// large slot a of h goes to a sampled server c, and a slot b of c comes
// back to h: smaller, or lighter on the metrics where h is hot. Only the end state is held to the hard constraints; the
// caller executes both moves of a step together.
func (sr *searcher) swap(h int32, g Goal, top []int32) bool {
	st := sr.st
	type pick struct {
		a, c, b int32
		d       delta
		ok      bool
	}
	var best pick
	m := st.m
	hot := sr.hot[:0] // metrics on which h violates g
	for k := 0; k < m; k++ {
		c, _ := excessOver(st.load[int(h)*m+k]/st.cap[int(h)*m+k], max(0, st.loadThr(h, g, k)))
		hot = append(hot, c > 0 || g == GoalCapacity)
	}
	sr.hot = hot
	for _, a := range top[:min(len(top), swapTop/2)] {
		if sr.gain[st.pos[a]] <= 0 {
			break
		}
		la := st.shLoad[int(st.slotShard[a])*m : int(st.slotShard[a])*m+m]
		for _, c := range sr.cand {
			if c == h || !sr.tick() {
				continue
			}
			if !st.moveAllowed(a, c) {
				continue
			}
			d1, ok := st.evalMove(a, c, false)
			if !ok {
				continue
			}
			posA := st.pos[a]
			st.apply(a, c)
			for _, b := range st.list[c] {
				if b == a || !lighterWhereHot(la, st.shLoad[int(st.slotShard[b])*m:], hot) || !sr.tick() {
					continue
				}
				d2, ok := st.evalMove(b, h, true)
				if !ok {
					continue
				}
				// c's end state, held to capacity (hard) and to the load
				// goals up to g like any destination.
				hitC := st.hitBits(c, int(st.slotShard[b]), -1, max(g, GoalCapacity))
				if hitC&(1<<GoalCapacity) != 0 {
					continue
				}
				d := d1
				d.add(&d2)
				// h may stay hot, only less so: improves judges it. The
				// destination rule applies to c alone.
				d.hit = hitC
				if sr.accept(&d, g) && (!best.ok || d.less(&best.d)) {
					best = pick{a: a, c: c, b: b, d: d, ok: true}
				}
			}
			st.apply(a, h)
			st.restorePos(a, h, posA)
			if sr.exhausted {
				return false
			}
		}
	}
	if !best.ok {
		return false
	}
	st.commit(best.a, best.c)
	st.commit(best.b, h)
	st.endStep()
	return true
}

// lighterWhereHot reports whether load b is below load a on some hot
// metric: otherwise swapping b for a cannot cool the hot server.
func lighterWhereHot(a, b []float64, hot []bool) bool {
	for k, h := range hot {
		if h && b[k] < a[k] {
			return true
		}
	}
	return false
}

// restorePos puts slot r back at index i of list[s] after a tentative move
// and its undo, so the caller's view of list[s] (and sr.gain, indexed by
// position) stays valid.
func (st *state) restorePos(r, s, i int32) {
	l := st.list[s]
	j := st.pos[r]
	l[i], l[j] = l[j], l[i]
	st.pos[l[i]], st.pos[l[j]] = i, j
}

// fill writes the assignment and the moves into res.
func (st *state) fill(res *Result) {
	ns := len(st.repOff) - 1
	flat := make([]int, len(st.at))
	res.Assignment = make([][]int, ns)
	for sh := 0; sh < ns; sh++ {
		lo, hi := st.repOff[sh], st.repOff[sh+1]
		res.Assignment[sh] = flat[lo:hi:hi]
		for j := lo; j < hi; j++ {
			flat[j] = int(st.at[j])
			if st.at[j] >= 0 && st.at[j] != st.init[j] {
				res.Moves = append(res.Moves, Move{Shard: sh, Replica: int(j - lo), From: int(st.init[j]), To: int(st.at[j])})
			}
		}
	}
}
