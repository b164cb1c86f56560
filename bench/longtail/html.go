package longtail

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/strata-cache/strata/internal/svgchart"
)

// WriteHTML writes one self-contained page: the table and four inline SVG
// charts against the promotion threshold N. It references nothing outside
// itself (no scripts, fonts, styles or images).
func (r *Report) WriteHTML(w io.Writer) error {
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>strata long-tail experiment</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{padding:.25em .7em;text-align:right;border-bottom:1px solid #ddd}
td:first-child,th:first-child{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:1em}
svg{background:#fcfcfc;border:1px solid #e4e4e4}svg text{font:12px system-ui,sans-serif}
` + svgchart.CSS + `
</style></head><body>
`)
	fmt.Fprintf(&b, "<h1>L1 only versus thin L1 + shared L2</h1>\n<p>Profile <b>%s</b>: %d clusters, Zipf α %.2f, %.0f %% of each cluster's keys shared; %.0f MiB in total for both layouts; each thin L1 is 1/%d of an L1-only cluster's memory, the shared L2 holds the rest. The first %.0f %% of the requests warm the caches and are not counted. Measured %s.</p>\n",
		html.EscapeString(r.Profile), r.Clusters, r.Alpha, 100*r.Overlap, mib(r.TotalMemory), r.ThinDivisor,
		100*r.WarmupFraction, html.EscapeString(r.Date.Format("2006-01-02 15:04 MST")))

	b.WriteString("<table><tr><th>layout</th><th>L1 hit %</th><th>L2 hit %</th><th>combined %</th><th>dup L1s</th><th>dup all tiers</th><th>L1 used MiB</th><th>L2 used MiB</th><th>L2 share %</th><th>promotions</th></tr>\n")
	for _, o := range r.Outcomes {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%d</td></tr>\n",
			html.EscapeString(o.Layout), 100*o.L1HitRatio, 100*o.L2HitRatio, 100*o.Combined, o.DupL1, o.DupAll,
			mib(o.L1Used), mib(o.L2Used), 100*o.L2Share, o.Promotions)
	}
	b.WriteString("</table>\n")

	var ns []float64
	var l1, l2, comb, dupL1, dupAll, share, mem []float64
	for _, o := range r.Outcomes {
		if o.Threshold == 0 {
			continue
		}
		ns = append(ns, float64(o.Threshold))
		l1 = append(l1, 100*o.L1HitRatio)
		l2 = append(l2, 100*o.L2HitRatio)
		comb = append(comb, 100*o.Combined)
		dupL1 = append(dupL1, o.DupL1)
		dupAll = append(dupAll, o.DupAll)
		share = append(share, 100*o.L2Share)
		mem = append(mem, mib(o.L1Used))
	}
	var refs [4][]svgchart.Ref
	if base := r.Baseline(); base != nil {
		refs[0] = []svgchart.Ref{{Name: "L1 only", Y: 100 * base.Combined, Color: refColor}}
		refs[1] = []svgchart.Ref{{Name: "L1 only", Y: base.DupL1, Color: refColor}}
		refs[3] = []svgchart.Ref{{Name: "L1 only", Y: mib(base.L1Used), Color: refColor}}
	}
	b.WriteString(`<div class="charts">` + "\n")
	if len(ns) > 0 {
		lineChart(&b, "Hit ratio (%)", ns, []series{{"L1", l1}, {"L2 (of L1 misses)", l2}, {"combined", comb}}, refs[0])
		lineChart(&b, "Duplication factor", ns, []series{{"L1s", dupL1}, {"all tiers", dupAll}}, refs[1])
		lineChart(&b, "Requests reaching L2 (%)", ns, []series{{"L2 share", share}}, nil)
		lineChart(&b, "L1 memory used (MiB, all clusters)", ns, []series{{"thin L1s", mem}}, refs[3])
	}
	b.WriteString("</div>\n<p>x axis: promotion threshold N (an L2 hit is copied into L1 with probability 1/N), log scale. Dashed lines: the L1-only layout.</p>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

type series struct {
	name string
	ys   []float64
}

// refColor draws the L1-only reference lines.
const refColor = "#555555"

// frame leaves room under the plot for the x labels and a legend of up to
// six entries.
var frame = svgchart.Frame{Width: 520, Height: 320, Left: 56, Right: 16, Top: 34, Bottom: 78}

// lineChart draws one chart: series against the thresholds xs on a log2
// axis, plus horizontal reference lines, with a legend below.
func lineChart(b *strings.Builder, title string, xs []float64, ss []series, refs []svgchart.Ref) {
	lo, hi := math.Inf(1), math.Inf(-1)
	c := svgchart.LineChart{Title: title, Frame: frame, Refs: refs, LegendBelow: true}
	for i, s := range ss {
		pts := make([]svgchart.Point, len(s.ys))
		for j, y := range s.ys {
			pts[j] = svgchart.Point{X: xs[j], Y: y}
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
		c.Series = append(c.Series, svgchart.Series{Name: s.name, Points: pts, Color: svgchart.Color(i), Markers: true})
	}
	for _, r := range refs {
		lo, hi = math.Min(lo, r.Y), math.Max(hi, r.Y)
	}
	ticks := svgchart.Cover(lo, hi)
	c.Y = svgchart.Axis{Min: ticks[0], Max: ticks[len(ticks)-1], Ticks: ticks, Format: svgchart.Trim}
	x0, x1 := xs[0], xs[len(xs)-1]
	if x1 == x0 {
		x0, x1 = x0/2, x1*2
	}
	c.X = svgchart.Axis{Label: "N", Min: x0, Max: x1, Scale: svgchart.Log2, Ticks: xs,
		Format: func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }}
	c.Write(b)
}
