package placement

// loadTerms adds to d the change of the load goals at server s when its
// load on every metric changes by sign × the load of shard sh. regional
// says whether the regional balance threshold stays put (the move stays in
// one region); otherwise that goal's change is left out, which only the
// goals above it may do (see improves).
func (st *state) loadTerms(d *delta, s int32, sh int, sign float64, regional bool) {
	m := st.m
	u := st.o.Utilization
	for k := 0; k < m; k++ {
		c := st.cap[int(s)*m+k]
		before := st.load[int(s)*m+k] / c
		after := (st.load[int(s)*m+k] + sign*st.shLoad[sh*m+k]) / c
		if before == after {
			continue
		}
		hit := sign > 0
		st.termAt(d, GoalCapacity, before, after, 1, hit)
		st.termAt(d, GoalUtilization, before, after, u, hit)
		st.termAt(d, GoalBalance, before, after, st.balThr[k], hit)
		if regional && st.regions > 1 {
			st.termAt(d, GoalRegionalBalance, before, after, st.regThr(st.region[s], k), hit)
		}
		if sign > 0 && st.balThr[k] > 0 {
			d.head = max(d.head, after/st.balThr[k])
		}
	}
}

func (st *state) termAt(d *delta, g Goal, before, after, thr float64, dest bool) {
	cb, eb := excessOver(before, thr)
	ca, ea := excessOver(after, thr)
	d.g[g].c += ca - cb
	d.g[g].e += ea - eb
	if dest && ca > 0 {
		d.hit |= 1 << uint(g)
	}
}

// zoneExcess is the zone goal of shard sh with slot r on server b (b may
// be -1): replicas sharing a zone beyond what the zones in use force.
func (st *state) zoneExcess(sh int, r, b int32) int32 {
	var zones [64]int32
	placed, distinct := int32(0), int32(0)
	for j := st.repOff[sh]; j < st.repOff[sh+1]; j++ {
		s := st.at[j]
		if j == r {
			s = b
		}
		if s < 0 {
			continue
		}
		placed++
		z := st.zone[s]
		seen := false
		for _, y := range zones[:distinct] {
			if y == z {
				seen = true
				break
			}
		}
		if !seen {
			zones[distinct] = z
			distinct++
		}
	}
	return max(0, min(placed, int32(st.zonesInUse))-distinct)
}

// evalMove returns the change of the objective if slot r moved to server
// b, and whether the hard constraints allow it: b eligible, within the move
// caps, holding no other replica of the shard and staying within capacity
// on every metric. With hard false only eligibility and distinctness are
// checked (the first half of a swap, whose end state is checked whole).
func (st *state) evalMove(r, b int32, hard bool) (delta, bool) {
	var d delta
	a := st.at[r]
	if a == b || !st.eligible[b] {
		return d, false
	}
	sh := int(st.slotShard[r])
	if st.holds(sh, b) {
		return d, false
	}
	m := st.m
	if hard {
		if !st.moveAllowed(r, b) {
			return d, false
		}
		for k := 0; k < m; k++ {
			if (st.load[int(b)*m+k]+st.shLoad[sh*m+k])/st.cap[int(b)*m+k] > 1+eps {
				return d, false
			}
		}
	}
	regional := a >= 0 && st.region[a] == st.region[b]
	if a < 0 {
		d.g[GoalUnplaced].c, d.g[GoalUnplaced].e = -1, -1
	} else {
		st.loadTerms(&d, a, sh, -1, regional)
		if st.draining[a] {
			d.g[GoalDrain].c, d.g[GoalDrain].e = -1, -1
		}
	}
	st.loadTerms(&d, b, sh, +1, regional)
	if p := st.pref[sh]; p >= 0 {
		before := a >= 0 && st.region[a] != p
		after := st.region[b] != p
		st.countTerm(&d, GoalRegion, before, after)
	}
	if st.repOff[sh+1]-st.repOff[sh] > 1 {
		z := st.zoneExcess(sh, r, b) - st.zoneExcess(sh, r, a)
		d.g[GoalZone].c, d.g[GoalZone].e = z, float64(z)
	}
	if o := st.origin[r]; o >= 0 {
		c := st.spreadCap[o]
		before, after := false, st.deadOn(o, b)+1 > c
		if a >= 0 {
			before = st.deadOn(o, a) > c
		}
		st.countTerm(&d, GoalFailoverSpread, before, after)
	}
	return d, true
}

func (st *state) countTerm(d *delta, g Goal, before, after bool) {
	v := int32(0)
	if before {
		v--
	}
	if after {
		v++
	}
	d.g[g].c += v
	d.g[g].e += float64(v)
}

// report evaluates the current assignment from scratch (not from the
// incremental sums, so tests can hold the two against each other).
func (st *state) report() Report {
	m := st.m
	var rep Report
	load := make([]float64, st.nSrv*m)
	regLoad := make([]float64, st.nRegions*m)
	for r, s := range st.at {
		if s < 0 {
			rep.Violations[GoalUnplaced]++
			continue
		}
		sh := int(st.slotShard[r])
		for k := 0; k < m; k++ {
			load[int(s)*m+k] += st.shLoad[sh*m+k]
			regLoad[int(st.region[s])*m+k] += st.shLoad[sh*m+k]
		}
		if p := st.pref[sh]; p >= 0 && st.region[s] != p {
			rep.Violations[GoalRegion]++
		}
		if st.draining[s] {
			rep.Violations[GoalDrain]++
		}
	}
	for sh := 0; sh+1 < len(st.repOff); sh++ {
		if st.repOff[sh+1]-st.repOff[sh] > 1 {
			rep.Violations[GoalZone] += int(st.zoneExcess(sh, -1, -1))
		}
	}
	rep.MaxUtil = make([]float64, m)
	rep.MeanUtil = make([]float64, m)
	rep.MaxOverMean = make([]float64, m)
	sumLoad := make([]float64, m)
	sumCap := make([]float64, m)
	add := func(g Goal, u, thr float64) {
		c, e := excessOver(u, thr)
		rep.Violations[g] += int(c)
		rep.Excess[g] += e
	}
	spread := map[[2]int32]int32{}
	for s := 0; s < st.nSrv; s++ {
		if !st.alive[s] {
			continue
		}
		reg := int(st.region[s])
		for k := 0; k < m; k++ {
			u := load[s*m+k] / st.cap[s*m+k]
			add(GoalCapacity, u, 1)
			add(GoalUtilization, u, st.o.Utilization)
			add(GoalBalance, u, st.balThr[k])
			if rc := st.regCap[reg*m+k]; rc > 0 && st.regions > 1 {
				add(GoalRegionalBalance, u, (1+st.o.Imbalance)*regLoad[reg*m+k]/rc)
			}
			if st.eligible[s] {
				rep.MaxUtil[k] = max(rep.MaxUtil[k], u)
				sumLoad[k] += load[s*m+k]
				sumCap[k] += st.cap[s*m+k]
			}
		}
		for _, r := range st.list[s] {
			if o := st.origin[r]; o >= 0 {
				spread[[2]int32{o, int32(s)}]++
			}
		}
	}
	for key, n := range spread {
		if c := st.spreadCap[key[0]]; n > c {
			rep.Violations[GoalFailoverSpread] += int(n - c)
		}
	}
	for g := range rep.Excess {
		switch Goal(g) {
		case GoalCapacity, GoalUtilization, GoalBalance, GoalRegionalBalance:
		default:
			rep.Excess[g] = float64(rep.Violations[g])
		}
	}
	for k := 0; k < m; k++ {
		if sumCap[k] > 0 {
			rep.MeanUtil[k] = sumLoad[k] / sumCap[k]
		}
		if rep.MeanUtil[k] > 0 {
			rep.MaxOverMean[k] = rep.MaxUtil[k] / rep.MeanUtil[k]
		}
	}
	return rep
}
