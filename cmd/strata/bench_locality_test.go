package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/testbin"
)

// A tiny `strata bench locality --json` (three short days on real
// memcached, etcd and strata processes) prints every field the issue
// names, with fractions in [0,1], and strata's placement sends fewer
// requests across regions than static hash placement.
func TestBenchLocalityTinyJSON(t *testing.T) {
	memcachedtest.Binary(t) // fail (or, outside CI, skip) without them
	etcdtest.Binary(t)
	bin := testbin.BuildStrata(t)
	var stdout, stderr bytes.Buffer
	args := []string{"locality", "--strata", bin, "--json", "--duration", "6s", "--users", "8", "--rate", "120", "--conns", "3", "--cost-requests", "1000"}
	if err := subcommands["bench"].run(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var doc struct {
		Note       string                                `json:"note"`
		FullWrites string                                `json:"full_replication_writes"`
		Placements map[string]map[string]json.RawMessage `json:"placements"`
		Goals      []map[string]any                      `json:"goals"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if !strings.Contains(doc.Note, "toxiproxy") || !strings.Contains(doc.Note, "netem") {
		t.Errorf("the note does not say how the delay is made: %q", doc.Note)
	}
	num := func(p, k string) float64 {
		t.Helper()
		raw, ok := doc.Placements[p][k]
		if !ok {
			t.Fatalf("%s has no %q: %s", p, k, stdout.String())
		}
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s.%s = %s: %v", p, k, raw, err)
		}
		return v
	}
	for _, p := range []string{"static", "full_replication", "strata"} {
		if _, ok := doc.Placements[p]; !ok {
			t.Fatalf("no placement %q: %s", p, stdout.String())
		}
		if f := num(p, "remote_fraction"); f < 0 || f > 1 {
			t.Errorf("%s remote_fraction %v", p, f)
		}
		if p50, p99 := num(p, "p50_ms"), num(p, "p99_ms"); !(p50 > 0) || p99 < p50 {
			t.Errorf("%s p50 %v p99 %v", p, p50, p99)
		}
		if b := num(p, "memory_bytes_per_region"); !(b > 0) {
			t.Errorf("%s memory_bytes_per_region %v", p, b)
		}
		if b := num(p, "cross_region_bytes"); !(b > 0) {
			t.Errorf("%s cross_region_bytes %v: nothing crossed the WAN", p, b)
		}
	}
	for _, k := range []string{"location_cache_hit_ratio", "counter_traffic_fraction"} {
		if f := num("strata", k); f < 0 || f > 1 {
			t.Errorf("strata %s %v", k, f)
		}
	}
	if m := num("strata", "migrations"); m < 0 {
		t.Errorf("strata migrations %v", m)
	}
	// Full replication caches every key in every region (its writes
	// refill what they invalidate): three regions hold about three times
	// what static placement, one copy of each key, holds per region.
	if doc.FullWrites != "refill" {
		t.Errorf("full_replication_writes %q, want the default refill", doc.FullWrites)
	}
	if f, st := num("full_replication", "memory_bytes_per_region"), num("static", "memory_bytes_per_region"); !(f > 2*st) {
		t.Errorf("full replication holds %v bytes per region, static %v: not every region caches everything", f, st)
	}
	if s, st := num("strata", "remote_fraction"), num("static", "remote_fraction"); !(s < st) {
		t.Errorf("strata's remote fraction %v is not below static's %v", s, st)
	}
	if len(doc.Goals) != 6 {
		t.Errorf("%d goals, want 6: %v", len(doc.Goals), doc.Goals)
	}
	for _, k := range []string{"etcd", "forward_cost"} {
		if _, ok := doc.Placements["strata"][k]; !ok {
			t.Errorf("strata has no %q", k)
		}
	}
}
