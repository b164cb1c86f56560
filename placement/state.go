package placement

// state is the search's working copy of a problem, in flat arrays indexed
// by int32 ids so the inner loop touches no maps and allocates nothing.
// A slot is one replica of one shard; slots of shard i are
// repOff[i]..repOff[i+1]-1, in the order of Result.Assignment.
//
// Invariants (kept by apply):
//   - load[s*m+k] is the sum of shLoad over the slots in list[s];
//   - at[r] >= 0 iff r is in list[at[r]] at index pos[r]; at[r] is never
//     a dead server;
//   - busy[s] counts placed slots with at != init whose init or at is s
//     (init only when s is alive), and moves counts placed slots with
//     at != init.
type state struct {
	o    *Options
	m    int
	nSrv int

	cap, load   []float64 // nSrv*m
	alive       []bool    // not dead
	eligible    []bool    // alive and not draining: may receive replicas
	draining    []bool
	region      []int32
	zone        []int32
	nRegions    int
	zonesInUse  int       // distinct zones among eligible servers
	regLoad     []float64 // nRegions*m: load on the region's live servers
	regCap      []float64 // nRegions*m: capacity of its eligible servers
	prefOK      []bool    // per region: has an eligible server
	regions     int       // regions with an eligible server
	eligibleAll []int32
	eligibleBy  [][]int32 // per region

	shLoad    []float64 // nShards*m
	shSize    []float64 // sum over metrics of load / mean eligible capacity
	pref      []int32
	repOff    []int32
	slotShard []int32

	at, init, origin []int32 // origin: dead server the slot was listed on, or -1
	list             [][]int32
	pos              []int32

	balThr    []float64 // per metric, in utilisation units
	spreadCap []int32   // per server: fair share of its replicas if it is dead

	busy  []int32
	moves int

	trace func(step []Move) // tests only: sees every step as it is applied
	step  []Move
}

func newState(p *Problem, o *Options) *state {
	m := p.Metrics
	n := len(p.Servers)
	st := &state{o: o, m: m, nSrv: n,
		cap: make([]float64, n*m), load: make([]float64, n*m),
		alive: make([]bool, n), eligible: make([]bool, n), draining: make([]bool, n),
		region: make([]int32, n), zone: make([]int32, n),
		list: make([][]int32, n), busy: make([]int32, n), spreadCap: make([]int32, n),
	}
	zones := map[int]bool{}
	for i, s := range p.Servers {
		copy(st.cap[i*m:], s.Capacity)
		st.alive[i] = !s.Dead
		st.draining[i] = s.Draining && !s.Dead
		st.eligible[i] = !s.Dead && !s.Draining
		st.region[i] = int32(s.Region)
		st.zone[i] = int32(s.Zone)
		st.nRegions = max(st.nRegions, s.Region+1)
		if st.eligible[i] {
			zones[s.Zone] = true
		}
	}
	st.zonesInUse = len(zones)
	st.regLoad = make([]float64, st.nRegions*m)
	st.regCap = make([]float64, st.nRegions*m)
	st.prefOK = make([]bool, st.nRegions)
	st.eligibleBy = make([][]int32, st.nRegions)
	totCap := make([]float64, m)
	for i := 0; i < n; i++ {
		if !st.eligible[i] {
			continue
		}
		r := st.region[i]
		if !st.prefOK[r] {
			st.regions++
		}
		st.prefOK[r] = true
		st.eligibleAll = append(st.eligibleAll, int32(i))
		st.eligibleBy[r] = append(st.eligibleBy[r], int32(i))
		for k := 0; k < m; k++ {
			st.regCap[int(r)*m+k] += st.cap[i*m+k]
			totCap[k] += st.cap[i*m+k]
		}
	}

	ns := len(p.Shards)
	st.shLoad = make([]float64, ns*m)
	st.shSize = make([]float64, ns)
	st.pref = make([]int32, ns)
	st.repOff = make([]int32, ns+1)
	demand := make([]float64, m)
	slots := 0
	for i, sh := range p.Shards {
		copy(st.shLoad[i*m:], sh.Load)
		st.pref[i] = int32(sh.Region)
		if sh.Region >= st.nRegions || (sh.Region >= 0 && !st.prefOK[sh.Region]) {
			st.pref[i] = -1 // a preference nobody can honour is no goal
		}
		st.repOff[i] = int32(slots)
		slots += sh.Replicas
		for k, l := range sh.Load {
			demand[k] += l * float64(sh.Replicas)
		}
	}
	st.repOff[ns] = int32(slots)
	ne := float64(max(1, len(st.eligibleAll)))
	for i := range p.Shards {
		for k := 0; k < m; k++ {
			if totCap[k] > 0 {
				st.shSize[i] += st.shLoad[i*m+k] / (totCap[k] / ne)
			}
		}
	}
	// The balance threshold is against the mean the assignment will have
	// once every replica is placed and draining servers are empty, so it
	// does not move while the search runs.
	st.balThr = make([]float64, m)
	for k := 0; k < m; k++ {
		mean := 0.0
		if totCap[k] > 0 {
			mean = demand[k] / totCap[k]
		}
		st.balThr[k] = (1 + o.Imbalance) * mean
	}

	st.slotShard = make([]int32, slots)
	st.at = make([]int32, slots)
	st.init = make([]int32, slots)
	st.origin = make([]int32, slots)
	st.pos = make([]int32, slots)
	for j := range st.at {
		st.at[j] = -1 // holds reads the slots of a shard not yet filled
	}
	deadCount := make([]int32, n)
	for i := range p.Shards {
		var listed []int
		if i < len(p.Assignment) {
			listed = p.Assignment[i]
		}
		for j := st.repOff[i]; j < st.repOff[i+1]; j++ {
			st.slotShard[j] = int32(i)
			st.at[j], st.init[j], st.origin[j] = -1, -1, -1
			idx := int(j - st.repOff[i])
			if idx >= len(listed) {
				continue
			}
			s := listed[idx]
			if s < 0 || s >= n {
				continue
			}
			if !st.alive[s] {
				st.init[j] = int32(s)
				st.origin[j] = int32(s)
				deadCount[s]++
				continue
			}
			if st.holds(i, int32(s)) {
				continue // a repeated server is one replica, not two
			}
			st.init[j] = int32(s)
			st.at[j] = int32(s)
		}
	}
	st.fillLists()
	for s, c := range deadCount {
		st.spreadCap[s] = int32((int(c) + len(st.eligibleAll) - 1) / max(1, len(st.eligibleAll)))
	}
	for j := range st.at {
		st.countMove(int32(j), +1)
	}
	return st
}

// listSlack is the room each server's list gets beyond its first
// replicas, so moves in rarely reallocate.
const listSlack = 8

// fillLists builds the per-server lists from at, carved out of one array
// (capped, so a list that outgrows its room reallocates rather than
// running into its neighbour's).
func (st *state) fillLists() {
	count := make([]int, st.nSrv)
	for _, s := range st.at {
		if s >= 0 {
			count[s]++
		}
	}
	backing := make([]int32, len(st.at)+listSlack*st.nSrv)
	off := 0
	for s, n := range count {
		st.list[s] = backing[off : off : off+n+listSlack]
		off += n + listSlack
	}
	for j, s := range st.at {
		if s >= 0 {
			st.attach(int32(j), s)
		}
	}
}

// holds reports whether a slot of shard sh is on server s.
func (st *state) holds(sh int, s int32) bool {
	for j := st.repOff[sh]; j < st.repOff[sh+1]; j++ {
		if st.at[j] == s {
			return true
		}
	}
	return false
}

func (st *state) attach(r, s int32) {
	st.pos[r] = int32(len(st.list[s]))
	st.list[s] = append(st.list[s], r)
	st.addLoad(r, s, +1)
}

func (st *state) detach(r, s int32) {
	l := st.list[s]
	i := st.pos[r]
	last := l[len(l)-1]
	l[i] = last
	st.pos[last] = i
	st.list[s] = l[:len(l)-1]
	st.addLoad(r, s, -1)
}

func (st *state) addLoad(r, s int32, sign float64) {
	m := st.m
	sh := int(st.slotShard[r])
	reg := int(st.region[s])
	for k := 0; k < m; k++ {
		l := sign * st.shLoad[sh*m+k]
		st.load[int(s)*m+k] += l
		st.regLoad[reg*m+k] += l
	}
}

// countMove adds (sign +1) or removes (-1) slot r's share of the move
// counters, which depend only on init[r] and at[r].
func (st *state) countMove(r int32, sign int32) {
	a, i := st.at[r], st.init[r]
	if a == i || a < 0 {
		return // unplaced is no move: nothing will be copied anywhere
	}
	st.moves += int(sign)
	if i >= 0 && st.alive[i] {
		st.busy[i] += sign
	}
	if a >= 0 {
		st.busy[a] += sign
	}
}

// apply moves slot r to server b (-1 would unplace; the search never does).
func (st *state) apply(r, b int32) {
	a := st.at[r]
	st.countMove(r, -1)
	if a >= 0 {
		st.detach(r, a)
	}
	st.at[r] = b
	if b >= 0 {
		st.attach(r, b)
	}
	st.countMove(r, +1)
}

// commit applies a move the search keeps (apply alone also serves to try
// and undo the first half of a swap).
func (st *state) commit(r, b int32) {
	if st.trace != nil {
		sh := st.slotShard[r]
		st.step = append(st.step, Move{Shard: int(sh), Replica: int(r - st.repOff[sh]), From: int(st.at[r]), To: int(b)})
	}
	st.apply(r, b)
}

// endStep closes a step (one move, or the two moves of a swap) for the
// test trace.
func (st *state) endStep() {
	if st.trace != nil && len(st.step) > 0 {
		st.trace(st.step)
		st.step = st.step[:0]
	}
}

// moveAllowed checks the move caps for slot r going to b.
func (st *state) moveAllowed(r, b int32) bool {
	o := st.o
	i := st.init[r]
	if b == i {
		return true // returning home undoes a move
	}
	first := st.at[r] == i || st.at[r] < 0 // not yet counted as a move
	if first && o.MaxMoves > 0 && st.moves >= o.MaxMoves {
		return false
	}
	if o.MaxMovesPerServer > 0 {
		if int(st.busy[b]) >= o.MaxMovesPerServer {
			return false
		}
		if first && i >= 0 && st.alive[i] && int(st.busy[i]) >= o.MaxMovesPerServer {
			return false
		}
	}
	return true
}

// regThr is the regional balance threshold of metric k in region reg: the
// region's current mean utilisation times (1 + Imbalance). It moves only
// when load crosses regions, which the regional phases never do.
func (st *state) regThr(reg int32, k int) float64 {
	c := st.regCap[int(reg)*st.m+k]
	if c <= 0 {
		return 0
	}
	return (1 + st.o.Imbalance) * st.regLoad[int(reg)*st.m+k] / c
}

// deadOn counts the slots from dead server d that sit on server s.
func (st *state) deadOn(d, s int32) int32 {
	n := int32(0)
	for _, r := range st.list[s] {
		if st.origin[r] == d {
			n++
		}
	}
	return n
}
