package placesvc

import (
	"reflect"
	"testing"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/loctable"
)

// TestRegionTotals: an access is remote when its region is not the
// serving one (the source while in Prepare, the owner once Migrating);
// a μ-shard without a row is served where it was asked; a region met
// only in the counters or the table is listed too.
func TestRegionTotals(t *testing.T) {
	table := map[string]loctable.Entry{
		"u: 1": {Owner: "a", Epoch: 1, State: loctable.Stable},
		"u: 2": {Owner: "b", Epoch: 2, State: loctable.Prepare, Source: "a"},   // a still serves
		"u: 3": {Owner: "b", Epoch: 2, State: loctable.Migrating, Source: "a"}, // b serves
		"u: 4": {Owner: "d", Epoch: 1, State: loctable.Stable},
	}
	counts := map[string]map[string]float64{
		"u: 1":    {"a": 10, "b": 1.004},
		"u: 2":    {"a": 3, "b": 2},
		"u: 3":    {"a": 4, "b": 5},
		"u: none": {"c": 7},
	}
	got := regionTotals([]string{"c", "a", "b"}, table, counts)
	want := []admin.RegionLocality{
		{Region: "a", Requests: 17, Remote: 4, MuShards: 1},
		{Region: "b", Requests: 8, Remote: 3, MuShards: 2},
		{Region: "c", Requests: 7, Remote: 0, MuShards: 0},
		{Region: "d", Requests: 0, Remote: 0, MuShards: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("regionTotals:\n got %+v\nwant %+v", got, want)
	}
	if got := regionTotals([]string{"a"}, nil, nil); !reflect.DeepEqual(got, []admin.RegionLocality{{Region: "a"}}) {
		t.Fatalf("nothing counted: %+v", got)
	}
}
