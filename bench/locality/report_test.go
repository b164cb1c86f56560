package locality

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The goals compare strata with the other placements exactly as the issue
// states them, and the JSON carries the field names.
func TestReportGoalsAndJSON(t *testing.T) {
	cfg := Config{Duration: 16 * time.Second, MigrateAfter: 400 * time.Millisecond, MaxTTL: 4800 * time.Millisecond, MinInterval: 4800 * time.Millisecond}
	rep := newReport(&cfg)
	mig, hit, counter := int64(30), 0.99, 0.004
	rep.add(Static, &Result{RemoteFraction: 0.66, RemoteByPhase: []float64{0.6, 0.7, 0.65}, P50Ms: 60, P99Ms: 90, CrossRegionBytes: 9e6, MemoryBytesPerRegion: 100_000})
	rep.add(Full, &Result{RemoteFraction: 0.2, P50Ms: 2, P99Ms: 85, CrossRegionBytes: 1e5, MemoryBytesPerRegion: 300_000})
	rep.add(Strata, &Result{RemoteFraction: 0.04, P50Ms: 3, P99Ms: 80, CrossRegionBytes: 1e6, MemoryBytesPerRegion: 160_000,
		Migrations: &mig, LocationCacheHitRatio: &hit, CounterTrafficFraction: &counter,
		ForwardCost: &ForwardCost{LocalUs: 20, ForwardedUs: 30, Ratio: 1.5}})
	rep.judge()
	want := []struct {
		prefix string
		value  float64
		met    bool
	}{
		{"strata: remote", 0.04, true},
		{"strata: p50", 0.95, true},
		{"strata: memory", 160_000.0 / 300_000, false},
		{"strata: location cache", 0.99, true},
		{"strata: counter traffic", 0.004, true},
		{"strata: CPU", 1.5, false},
	}
	if len(rep.Goals) != len(want) {
		t.Fatalf("goals %+v", rep.Goals)
	}
	for i, w := range want {
		g := rep.Goals[i]
		if !strings.HasPrefix(g.Goal, w.prefix) || g.Met != w.met || g.Value < w.value-1e-9 || g.Value > w.value+1e-9 {
			t.Errorf("goal %d = %+v, want %s… %v met=%v", i, g, w.prefix, w.value, w.met)
		}
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Note       string                                `json:"note"`
		Placements map[string]map[string]json.RawMessage `json:"placements"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range Placements {
		for _, k := range []string{"remote_fraction", "remote_fraction_by_phase", "p50_ms", "p99_ms", "cross_region_bytes", "memory_bytes_per_region"} {
			if _, ok := doc.Placements[p][k]; !ok {
				t.Errorf("%s has no %s", p, k)
			}
		}
	}
	for _, k := range []string{"migrations", "location_cache_hit_ratio", "counter_traffic_fraction"} {
		if _, ok := doc.Placements[Strata][k]; !ok {
			t.Errorf("strata has no %s", k)
		}
		if _, ok := doc.Placements[Static][k]; ok {
			t.Errorf("static has strata's %s", k)
		}
	}
	buf.Reset()
	if err := rep.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"toxiproxy", "netem", "full_replication", "goals:", "missed"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, buf.String())
		}
	}
}
