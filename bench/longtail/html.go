package longtail

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
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
	var refs [4][]refLine
	if base := r.Baseline(); base != nil {
		refs[0] = []refLine{{"L1 only", 100 * base.Combined, refColor}}
		refs[1] = []refLine{{"L1 only", base.DupL1, refColor}}
		refs[3] = []refLine{{"L1 only", mib(base.L1Used), refColor}}
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

type refLine struct {
	name  string
	y     float64
	color string
}

var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd"}

// refColor draws the L1-only reference lines.
const refColor = "#555555"

// lineChart draws one chart: series against x on a log2 axis, plus
// horizontal reference lines, with a legend below.
func lineChart(b *strings.Builder, title string, xs []float64, ss []series, refs []refLine) {
	const width, height = 520, 320
	const left, right, top, bottom = 56, 16, 34, 78
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, y := range s.ys {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}
	for _, r := range refs {
		lo, hi = math.Min(lo, r.y), math.Max(hi, r.y)
	}
	ticks := niceTicks(lo, hi)
	ymin, ymax := ticks[0], ticks[len(ticks)-1]
	x0, x1 := math.Log2(xs[0]), math.Log2(xs[len(xs)-1])
	if x1 == x0 {
		x0, x1 = x0-1, x1+1
	}
	px := func(x float64) float64 { return float64(left) + (math.Log2(x)-x0)/(x1-x0)*pw }
	py := func(y float64) float64 { return float64(top) + (1-(y-ymin)/(ymax-ymin))*ph }

	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`+"\n",
		width, height, width, height, html.EscapeString(title))
	fmt.Fprintf(b, `<text x="%d" y="20" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	for _, t := range ticks {
		y := py(t)
		fmt.Fprintf(b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#e6e6e6"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
			left, float64(left)+pw, y, y, left-6, y+4, formatTick(t))
	}
	for _, x := range xs {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%.1f" stroke="#f0f0f0"/><text x="%.1f" y="%.1f" text-anchor="middle">%g</text>`+"\n",
			px(x), px(x), top, float64(top)+ph, px(x), float64(top)+ph+16, x)
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">N</text>`+"\n", float64(left)+pw/2, float64(top)+ph+32)
	item := 0 // legend entries, three to a row below the plot
	legend := func(name, color string, dashed bool) {
		lx := float64(left) + float64(item%3)*150
		ly := float64(height) - 30 + float64(item/3)*16
		dash := ""
		if dashed {
			dash = ` stroke-dasharray="5 4"`
		}
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/><text x="%.1f" y="%.1f">%s</text>`+"\n",
			lx, lx+22, ly, ly, color, dash, lx+28, ly+4, html.EscapeString(name))
		item++
	}
	for _, r := range refs {
		fmt.Fprintf(b, `<line x1="%d" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="5 4"/>`+"\n",
			left, float64(left)+pw, py(r.y), py(r.y), r.color)
		legend(r.name, r.color, true)
	}
	for i, s := range ss {
		color := colors[i%len(colors)]
		var pts strings.Builder
		for j, y := range s.ys {
			fmt.Fprintf(&pts, "%.1f,%.1f ", px(xs[j]), py(y))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.TrimSpace(pts.String()))
		for j, y := range s.ys {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>N=%g: %s</title></circle>`+"\n",
				px(xs[j]), py(y), color, xs[j], formatTick(y))
		}
		legend(s.name, color, false)
	}
	b.WriteString("</svg>\n")
}

// niceTicks returns 3 to 7 evenly spaced round values covering [lo, hi].
func niceTicks(lo, hi float64) []float64 {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-1, hi+1
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Floor(lo/step) * step
	var ticks []float64
	for v := start; ; v += step {
		ticks = append(ticks, roundTo(v, 9))
		if v >= hi-step*1e-9 && len(ticks) >= 2 {
			return ticks
		}
	}
}

func formatTick(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return s
}
