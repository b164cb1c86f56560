package top

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/admin/history"
)

func TestRenderShowsTheHeadlineFigures(t *testing.T) {
	start := time.Date(2026, 3, 4, 5, 6, 0, 0, time.UTC)
	var pts []history.Point
	// 20 seconds: the first ten without L1 hits, the last ten with 66 % of
	// reads hitting L1 and 27 of the other 34 hitting L2 (93 % combined).
	for i := range 20 {
		p := history.Point{T: start.Add(time.Duration(i+1) * time.Second).UnixMilli(), Span: 1, Requests: 100, L1Reads: 100, L2Reads: 100, L2Hits: 80, Conns: 3, P50: 0.25, P90: 0.5, P99: 1.5}
		if i >= 10 {
			p.L1Hits, p.L2Reads, p.L2Hits = 66, 34, 27
		}
		pts = append(pts, history.Fold([]history.Point{p}))
	}
	f := Frame{Addr: "127.0.0.1:11299", Now: start.Add(20 * time.Second), Started: start, N: 32, Rules: 2, Points: pts,
		Tiers:   []admin.TierStatus{{Name: "l2", Kind: "memcached", Counters: map[string]uint64{"hits": 5}, Servers: []admin.ServerStatus{{State: "up"}, {State: "down"}}}},
		TopKeys: []admin.TopKey{{Key: "user:hot", PerSec: 50.5}}}
	out := Render(f)
	for _, want := range []string{
		"strata 127.0.0.1:11299 · up 20s · N=32 (+2 prefix rules) · 05:06:20",
		"hit ratio              93.0 %         86.5 %",
		"  L1                   66.0 %         33.0 %",
		"requests/s                100            100",
		"latency ms       p50 0.250  p90 0.500  p99 1.500",
		"1/2 servers up",
		"user:hot",
		"50.5",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("frame lacks %q:\n%s", want, out)
		}
	}
}
