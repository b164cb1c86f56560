package top

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin/history"
)

// Render lays out one frame as plain text, lines ending in "\r\n" so that a
// terminal in raw mode shows them the same.
func Render(f Frame) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteString("\r\n")
	}
	up := "–"
	if !f.Started.IsZero() {
		up = f.Now.Sub(f.Started).Truncate(time.Second).String()
	}
	rules := ""
	if f.Rules > 0 {
		rules = fmt.Sprintf(" (+%d prefix rules)", f.Rules)
	}
	line("strata %s · up %s · N=%d%s · %s", f.Addr, up, f.N, rules, f.Now.Format("15:04:05"))
	line("")
	recent := f.Points
	if len(recent) > recentPoints {
		recent = recent[len(recent)-recentPoints:]
	}
	last, all := history.Fold(recent), history.Fold(f.Points)
	line("%-16s %12s %14s", "", "last 10 s", "since start")
	line("%-16s %12s %14s", "hit ratio", pct(last.HitCombined), pct(all.HitCombined))
	line("%-16s %12s %14s", "  L1", pct(last.HitL1), pct(all.HitL1))
	line("%-16s %12s %14s", "  L2", pct(last.HitL2), pct(all.HitL2))
	line("%-16s %12.0f %14.0f", "requests/s", last.RPS, all.RPS)
	line("%-16s %12.1f %14.1f", "promotions/s", last.PPS, all.PPS)
	line("%-16s %12.1f %14.1f", "errors/s", last.EPS, all.EPS)
	if n := len(recent); n > 0 {
		p := recent[n-1]
		line("%-16s p50 %.3f  p90 %.3f  p99 %.3f", "latency ms", p.P50, p.P90, p.P99)
		line("%-16s %12d", "connections", p.Conns)
	}
	minute := f.Points
	if len(minute) > 60 {
		minute = minute[len(minute)-60:]
	}
	line("%-16s %s", "requests, 60 s", spark(minute))
	line("")
	for _, t := range f.Tiers {
		up, total := 0, len(t.Servers)
		for _, s := range t.Servers {
			if s.State == "up" {
				up++
			}
		}
		servers := ""
		if total > 0 {
			servers = fmt.Sprintf(" · %d/%d servers up", up, total)
		}
		line("tier %-4s %-10s hits %-10d misses %-10d errors %d%s", t.Name, t.Kind, t.Counters["hits"], t.Counters["misses"], t.Counters["errors"], servers)
	}
	if len(f.TopKeys) > 0 {
		line("")
		line("%-40s %10s", "busiest sampled keys", "per s")
		for _, k := range f.TopKeys {
			key := k.Key
			if len(key) > 40 {
				key = key[:37] + "..."
			}
			line("%-40s %10.1f", key, k.PerSec)
		}
	}
	for _, p := range f.Problems {
		line("! %s", p)
	}
	return b.String()
}

func pct(r float64) string {
	if r < 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*r)
}

// spark draws requests/s as a row of block characters, tallest = busiest.
func spark(ps []history.Point) string {
	const blocks = "▁▂▃▄▅▆▇█"
	runes := []rune(blocks)
	top := 0.0
	for _, p := range ps {
		top = max(top, p.RPS)
	}
	var b strings.Builder
	for _, p := range ps {
		i := 0
		if top > 0 {
			i = int(p.RPS / top * float64(len(runes)-1))
		}
		b.WriteRune(runes[i])
	}
	return b.String()
}
