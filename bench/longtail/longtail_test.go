package longtail

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/strata-cache/strata/bench/workload"
)

func smallWorkload(t *testing.T, clusters int, overlap, alpha float64, keys uint64) *workload.Workload {
	t.Helper()
	w, err := workload.New(&workload.Profile{
		Name: "small", Seed: 11, Clusters: clusters, Overlap: overlap, FillOnMiss: true,
		Mix: workload.Mix{Get: 0.95, Set: 0.05},
		Families: []workload.Family{{
			Name: "p", Pattern: "p:{id}", Keys: keys, Weight: 1, Alpha: alpha,
			ValueSize: workload.Uniform(50, 150),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func run(t *testing.T, cfg Config) *Report {
	t.Helper()
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestOutcomesAreConsistent(t *testing.T) {
	const clusters = 3
	rep := run(t, Config{
		Workload: smallWorkload(t, clusters, 0.8, 1.0, 20_000), TotalMemory: clusters * 512 << 10,
		Thresholds: []uint32{1, 32}, Requests: 80_000,
	})
	if len(rep.Outcomes) != 3 {
		t.Fatalf("%d outcomes, want L1 only + 2 thresholds", len(rep.Outcomes))
	}
	for _, o := range rep.Outcomes {
		if o.Gets != o.L1Hits+o.L2Hits+o.Misses {
			t.Errorf("%s: %d gets != %d + %d + %d", o.Layout, o.Gets, o.L1Hits, o.L2Hits, o.Misses)
		}
		if o.Requests <= o.Gets || o.Gets == 0 {
			t.Errorf("%s: %d requests, %d gets", o.Layout, o.Requests, o.Gets)
		}
		// The paper's identity: combined = h1 + (1 − h1)·h2.
		if want := o.L1HitRatio + (1-o.L1HitRatio)*o.L2HitRatio; math.Abs(o.Combined-want) > 1e-12 {
			t.Errorf("%s: combined %v, h1 + (1-h1)h2 = %v", o.Layout, o.Combined, want)
		}
		if o.DupL1 < 1 || o.DupL1 > clusters || o.DupAll < 1 || o.DupAll > clusters+1 {
			t.Errorf("%s: duplication %v / %v outside [1, clusters]", o.Layout, o.DupL1, o.DupAll)
		}
		if o.L1Used > o.L1Memory || o.L2Used > o.L2Memory || o.L1Bytes > o.L1Used {
			t.Errorf("%s: memory used beyond the budget: %+v", o.Layout, o)
		}
	}
	base, n1, n32 := rep.Baseline(), rep.At(1), rep.At(32)
	if base.L2Hits != 0 || base.L2Share != 0 || base.DupL1 != base.DupAll || base.Promotions != 0 {
		t.Errorf("L1 only used an L2: %+v", base)
	}
	if base.L1Memory != n1.L1Memory+n1.L2Memory || n1.L1Memory*8 != base.L1Memory {
		t.Errorf("layouts differ in memory: L1 only %d; layered L1 %d + L2 %d", base.L1Memory, n1.L1Memory, n1.L2Memory)
	}
	if !(n1.Promotions > n32.Promotions && n1.L1HitRatio > n32.L1HitRatio && n1.L2Share < n32.L2Share) {
		t.Errorf("N=1 should promote more, hit L1 more and send less to L2 than N=32: %+v vs %+v", n1, n32)
	}
}

func TestDeterministic(t *testing.T) {
	cfg := Config{
		Workload: smallWorkload(t, 2, 0.5, 0.9, 10_000), TotalMemory: 2 * 256 << 10,
		Thresholds: []uint32{16}, Requests: 30_000, Seed: 5,
	}
	a, b := run(t, cfg), run(t, cfg)
	for i := range a.Outcomes {
		x, y := a.Outcomes[i], b.Outcomes[i]
		x.Seconds, y.Seconds = 0, 0
		if x != y {
			t.Errorf("two runs differ:\n%+v\n%+v", x, y)
		}
	}
}

// With caches large enough for every key, the census sees each shared key
// in every cluster's L1 and each private key in one.
func TestDuplicationCensus(t *testing.T) {
	for _, tc := range []struct {
		overlap float64
		want    float64
	}{{1, 3}, {0, 1}} {
		rep := run(t, Config{
			Workload: smallWorkload(t, 3, tc.overlap, 0, 200), TotalMemory: 3 * 256 << 10,
			Thresholds: []uint32{1}, Requests: 20_000,
		})
		base := rep.Baseline()
		if math.Abs(base.DupL1-tc.want) > 1e-9 {
			t.Errorf("overlap %v: L1-only duplication %v, want %v", tc.overlap, base.DupL1, tc.want)
		}
		// Every key is in L2 once, so the all-tier factor counts L2's copy
		// too: (Σ L1 + L2) ÷ union.
		n1 := rep.At(1)
		if want := float64(n1.L1Bytes+n1.L2Bytes) / float64(n1.L2Bytes); math.Abs(n1.DupAll-want) > 1e-9 {
			t.Errorf("overlap %v: all-tier duplication %v, want %v", tc.overlap, n1.DupAll, want)
		}
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	rep := run(t, Config{
		Workload: smallWorkload(t, 2, 0.7, 1.0, 5_000), TotalMemory: 2 * 256 << 10,
		Thresholds: []uint32{8, 32}, Requests: 10_000,
	})
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d charts, want 4", n)
	}
	for _, bad := range []string{"<script", "src=", "href=", "url(", "<link", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must not load anything", bad)
		}
	}
	if strings.Count(page, "http") != strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("page names a URL other than the SVG namespace")
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "N=32 vs L1 only") {
		t.Errorf("table lacks the N=32 comparison:\n%s", table.String())
	}
}
