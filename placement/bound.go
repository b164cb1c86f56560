package placement

import (
	"slices"
)

// minMoves is a lower bound on the moves of any assignment that leaves no
// replica unplaced and no violation of the capacity, region, drain,
// utilisation and global balance goals. It is the larger of two bounds:
//
//   - Per server: a draining server must lose every replica, and any server
//     must lose the replicas that sit outside their preferred region. A
//     server above min(capacity, utilisation ceiling, balance threshold) on
//     metric k must lose at least the number of its largest replicas (by
//     metric k) whose load covers the excess, since no smaller set can; on
//     several metrics, at least the largest of these counts. Servers are
//     disjoint sources, and each unplaced replica needs a placement of its
//     own, so the sum over servers plus the unplaced replicas bounds the
//     moves.
//   - Zones: each zone collision needs one placed replica to move, unless
//     one of the shard's unplaced replicas cures it as it is placed; plus
//     the unplaced replicas.
//
// Regional balance and failover spread depend on where moved load lands,
// so they add nothing here; the bound stays sound, only looser where they
// bind.
func (st *state) minMoves() int {
	m := st.m
	unplaced := 0
	for _, s := range st.at {
		if s < 0 {
			unplaced++
		}
	}
	perServer := unplaced
	var loads []float64
	for s := int32(0); s < int32(st.nSrv); s++ {
		if !st.alive[s] {
			continue
		}
		l := st.list[s]
		if st.draining[s] {
			perServer += len(l)
			continue
		}
		forced := 0
		for _, r := range l {
			if p := st.pref[st.slotShard[r]]; p >= 0 && st.region[s] != p {
				forced++
			}
		}
		need := 0
		for k := 0; k < m; k++ {
			c := st.cap[int(s)*m+k]
			thr := min(1, st.o.Utilization, st.balThr[k])
			excess := st.load[int(s)*m+k] - (thr+eps)*c
			if excess <= 0 {
				continue
			}
			loads = loads[:0]
			for _, r := range l {
				loads = append(loads, st.shLoad[int(st.slotShard[r])*m+k])
			}
			slices.Sort(loads)
			n, sum := 0, 0.0
			for i := len(loads) - 1; i >= 0 && sum < excess; i-- {
				sum += loads[i]
				n++
			}
			need = max(need, n)
		}
		perServer += max(forced, need)
	}
	zones := unplaced
	for sh := 0; sh+1 < len(st.repOff); sh++ {
		if st.repOff[sh+1]-st.repOff[sh] < 2 {
			continue
		}
		// Placing one of the shard's unplaced replicas in a missing zone
		// may cure a collision without moving a placed replica.
		missing := int32(0)
		for j := st.repOff[sh]; j < st.repOff[sh+1]; j++ {
			if st.at[j] < 0 {
				missing++
			}
		}
		zones += int(max(0, st.zoneExcess(sh, -1, -1)-missing))
	}
	return max(perServer, zones)
}
