package placesvc

import (
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/placement"
)

// RegionCapacity is what the members' capacity reports say of one region.
type RegionCapacity struct {
	placement.RegionState
	// Known: a fresh report of the region exists; Used and Limit are its
	// bytes in use and its size (zero when not Known).
	Known       bool
	Used, Limit uint64
}

// RegionCapacities turns the members' capacity reports into what
// placement.Decide knows of each region, in the order of regions. It is
// pure: the time is now, and nothing else is read.
//
//   - A report older than maxAge (now − At > maxAge) is ignored; so is one
//     of a region not in regions.
//   - Per region the freshest report counts (its members share one L2 and
//     report the same pool; the latest measurement wins).
//   - Spare = Limit − Used (0 when Used ≥ Limit or the region has no
//     report).
//   - OverCapacity: Used/Limit ≥ ceiling, except that when every region
//     with a report is at or above the ceiling none is marked: capacity
//     steers μ-shards toward regions with room, and with no room anywhere
//     it must not stop every migration. A region without a report is
//     never over capacity.
func RegionCapacities(regions []string, reports []locsvc.Capacity, now time.Time, maxAge time.Duration, ceiling float64) []RegionCapacity {
	freshest := make(map[string]locsvc.Capacity, len(regions))
	for _, r := range reports {
		if now.Sub(r.At) > maxAge {
			continue
		}
		if cur, ok := freshest[r.Region]; !ok || r.At.After(cur.At) {
			freshest[r.Region] = r
		}
	}
	out := make([]RegionCapacity, len(regions))
	reported, over := 0, 0
	for i, name := range regions {
		out[i].Name = name
		r, ok := freshest[name]
		if !ok || r.Limit == 0 {
			continue
		}
		out[i].Known, out[i].Used, out[i].Limit = true, r.Used, r.Limit
		if r.Used < r.Limit {
			out[i].Spare = float64(r.Limit - r.Used)
		}
		// The quotient, not ceiling × Limit: a ratio equal to the ceiling
		// as written (900 of 1000 for 0.9) rounds to the same float.
		out[i].OverCapacity = float64(r.Used)/float64(r.Limit) >= ceiling
		reported++
		if out[i].OverCapacity {
			over++
		}
	}
	if reported > 0 && over == reported {
		for i := range out {
			out[i].OverCapacity = false
		}
	}
	return out
}

// regionStates are the placement.RegionStates of rc.
func regionStates(rc []RegionCapacity) []placement.RegionState {
	out := make([]placement.RegionState, len(rc))
	for i, r := range rc {
		out[i] = r.RegionState
	}
	return out
}
