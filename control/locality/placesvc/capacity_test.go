package placesvc

import (
	"reflect"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/placement"
)

func rc(name string, used, limit uint64, spare float64, over bool) RegionCapacity {
	return RegionCapacity{RegionState: placement.RegionState{Name: name, OverCapacity: over, Spare: spare}, Known: true, Used: used, Limit: limit}
}

func unknown(name string) RegionCapacity {
	return RegionCapacity{RegionState: placement.RegionState{Name: name}}
}

// TestRegionCapacities: exact region states from members' reports.
func TestRegionCapacities(t *testing.T) {
	now := t0
	maxAge := 30 * time.Second
	rep := func(region string, used, limit uint64, age time.Duration) locsvc.Capacity {
		return locsvc.Capacity{Region: region, Used: used, Limit: limit, At: now.Add(-age)}
	}
	regions := []string{"a", "b", "c"}
	for _, c := range []struct {
		name    string
		ceiling float64
		reports []locsvc.Capacity
		want    []RegionCapacity
	}{{
		name: "no reports: nothing known, nothing over", ceiling: 0.9,
		want: []RegionCapacity{unknown("a"), unknown("b"), unknown("c")},
	}, {
		name: "fresh and stale: a report older than maxAge is ignored", ceiling: 0.9,
		reports: []locsvc.Capacity{rep("a", 100, 1000, maxAge), rep("b", 950, 1000, maxAge+time.Millisecond), rep("c", 10, 100, 0)},
		want:    []RegionCapacity{rc("a", 100, 1000, 900, false), unknown("b"), rc("c", 10, 100, 90, false)},
	}, {
		name: "two members of one region: the freshest wins, whatever the order", ceiling: 0.9,
		reports: []locsvc.Capacity{rep("a", 500, 1000, 2*time.Second), rep("a", 950, 1000, time.Second), rep("a", 10, 1000, 3*time.Second), rep("b", 10, 1000, 0)},
		want:    []RegionCapacity{rc("a", 950, 1000, 50, true), rc("b", 10, 1000, 990, false), unknown("c")},
	}, {
		name: "the ceiling's boundary: at it is over, one byte under is not", ceiling: 0.9,
		reports: []locsvc.Capacity{rep("a", 900, 1000, 0), rep("b", 899, 1000, 0), rep("c", 0, 1000, 0)},
		want:    []RegionCapacity{rc("a", 900, 1000, 100, true), rc("b", 899, 1000, 101, false), rc("c", 0, 1000, 1000, false)},
	}, {
		name: "ceiling 1: over only when full; used above the limit has no spare", ceiling: 1,
		reports: []locsvc.Capacity{rep("a", 999, 1000, 0), rep("b", 1000, 1000, 0), rep("c", 1200, 1000, 0)},
		want:    []RegionCapacity{rc("a", 999, 1000, 1, false), rc("b", 1000, 1000, 0, true), rc("c", 1200, 1000, 0, true)},
	}, {
		name: "every region with a report over: none is marked", ceiling: 0.5,
		reports: []locsvc.Capacity{rep("a", 600, 1000, 0), rep("b", 2000, 2000, 0)},
		want:    []RegionCapacity{rc("a", 600, 1000, 400, false), rc("b", 2000, 2000, 0, false), unknown("c")},
	}, {
		name: "a region without a report is never over, and does not lift the others' mark", ceiling: 0.5,
		reports: []locsvc.Capacity{rep("a", 600, 1000, 0), rep("b", 100, 1000, 0), rep("zz", 1, 10, 0)},
		want:    []RegionCapacity{rc("a", 600, 1000, 400, true), rc("b", 100, 1000, 900, false), unknown("c")},
	}, {
		name: "a report from the member's future (clock skew) counts as fresh", ceiling: 0.9,
		reports: []locsvc.Capacity{rep("a", 1, 10, -time.Minute), rep("a", 9, 10, 0)},
		want:    []RegionCapacity{rc("a", 1, 10, 9, false), unknown("b"), unknown("c")},
	}} {
		got := RegionCapacities(regions, c.reports, now, maxAge, c.ceiling)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}
