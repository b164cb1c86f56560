package report

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// The charts are drawn here rather than by a library so the HTML page is
// one self-contained file with no scripts and no external assets.

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"}

func color(i int) string { return palette[i%len(palette)] }

const (
	chartW, chartH              = 760, 380
	padL, padR, padT, padB      = 80, 190, 36, 76
	plotW, plotH                = chartW - padL - padR, chartH - padT - padB
	maxLabel                    = 20
	legendLine, legendRowHeight = 22, 18
)

type xy struct{ x, y float64 }

type series struct {
	name   string
	pts    []xy
	dashed bool
	color  string
}

type axis struct {
	label    string
	min, max float64
	log      bool
	binary   bool // ticks at round multiples of KiB, MiB, ...
	format   func(float64) string
}

func (a axis) pos(v float64, length float64) float64 {
	if a.log {
		lo, hi := math.Log10(a.min), math.Log10(a.max)
		if hi == lo {
			return 0
		}
		return (math.Log10(math.Max(v, a.min)) - lo) / (hi - lo) * length
	}
	if a.max == a.min {
		return 0
	}
	return (v - a.min) / (a.max - a.min) * length
}

// ticks returns about five round values across the axis.
func (a axis) ticks() []float64 {
	if a.log {
		var t []float64
		for p := math.Pow(10, math.Floor(math.Log10(a.min))); p <= a.max*1.0001; p *= 10 {
			if p >= a.min*0.9999 {
				t = append(t, p)
			}
		}
		if len(t) < 2 {
			t = []float64{a.min, a.max}
		}
		return t
	}
	span := a.max - a.min
	if span <= 0 {
		return []float64{a.min}
	}
	raw := span / 5
	unit := 1.0
	if a.binary {
		for raw/unit >= 1024 {
			unit *= 1024
		}
		raw /= unit
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw))) * unit
	raw *= unit
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var t []float64
	for v := math.Ceil(a.min/step) * step; v <= a.max+step*1e-9; v += step {
		t = append(t, v)
	}
	return t
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }

func short(s string) string {
	if len(s) <= maxLabel {
		return s
	}
	return s[:maxLabel-1] + "…"
}

func svgOpen(b *strings.Builder, title string) {
	fmt.Fprintf(b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`, chartW, chartH, chartW, chartH, esc(title))
	fmt.Fprintf(b, `<text x="%d" y="22" class="title">%s</text>`, padL, esc(title))
}

func drawAxes(b *strings.Builder, x, y axis) {
	fmt.Fprintf(b, `<g transform="translate(%d,%d)">`, padL, padT)
	for _, t := range y.ticks() {
		py := float64(plotH) - y.pos(t, plotH)
		fmt.Fprintf(b, `<line x1="0" x2="%d" y1="%s" y2="%s" class="grid"/><text x="-6" y="%s" class="tick" text-anchor="end" dominant-baseline="middle">%s</text>`,
			plotW, f1(py), f1(py), f1(py), esc(y.format(t)))
	}
	if x.format != nil {
		for _, t := range x.ticks() {
			px := x.pos(t, plotW)
			fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="0" y2="%d" class="grid"/><text x="%s" y="%d" class="tick" text-anchor="middle">%s</text>`,
				f1(px), f1(px), plotH, f1(px), plotH+16, esc(x.format(t)))
		}
	}
	fmt.Fprintf(b, `<line x1="0" x2="%d" y1="%d" y2="%d" class="axis"/><line x1="0" x2="0" y1="0" y2="%d" class="axis"/>`, plotW, plotH, plotH, plotH)
	fmt.Fprintf(b, `<text x="%d" y="%d" class="label" text-anchor="middle">%s</text>`, plotW/2, plotH+40, esc(x.label))
	fmt.Fprintf(b, `<text transform="translate(-62,%d) rotate(-90)" class="label" text-anchor="middle">%s</text>`, plotH/2, esc(y.label))
	b.WriteString(`</g>`)
}

func legend(b *strings.Builder, items []series) {
	x := padL + plotW + 16
	for i, s := range items {
		y := padT + 8 + i*legendRowHeight
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="5,3"`
		}
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"%s/><text x="%d" y="%d" class="legend" dominant-baseline="middle">%s<title>%s</title></text>`,
			x, x+legendLine, y, y, s.color, dash, x+legendLine+6, y, esc(short(s.name)), esc(s.name))
	}
}

// lineChart draws each series as a polyline over the two axes; legend
// lists the entries to explain (nil: every series).
func lineChart(b *strings.Builder, title string, x, y axis, ss, legendItems []series) {
	svgOpen(b, title)
	drawAxes(b, x, y)
	fmt.Fprintf(b, `<g transform="translate(%d,%d)">`, padL, padT)
	for _, s := range ss {
		if len(s.pts) == 0 {
			continue
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="5,3"`
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="`, s.color, dash)
		for i, p := range s.pts {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f1(x.pos(p.x, plotW)))
			b.WriteByte(',')
			b.WriteString(f1(float64(plotH) - y.pos(p.y, plotH)))
		}
		fmt.Fprintf(b, `"><title>%s</title></polyline>`, esc(s.name))
	}
	b.WriteString(`</g>`)
	if legendItems == nil {
		legendItems = ss
	}
	legend(b, legendItems)
	b.WriteString("</svg>\n")
}

// barChart draws grouped vertical bars: one group per label, one bar per
// series name. refs draws dashed horizontal reference lines.
func barChart(b *strings.Builder, title string, groups, names []string, vals [][]float64, y axis, refs []float64) {
	svgOpen(b, title)
	drawAxes(b, axis{}, y)
	fmt.Fprintf(b, `<g transform="translate(%d,%d)">`, padL, padT)
	for _, r := range refs {
		py := float64(plotH) - y.pos(r, plotH)
		fmt.Fprintf(b, `<line x1="0" x2="%d" y1="%s" y2="%s" class="ref"/>`, plotW, f1(py), f1(py))
	}
	if len(groups) > 0 && len(names) > 0 {
		gw := float64(plotW) / float64(len(groups))
		bw := gw * 0.8 / float64(len(names))
		for g, label := range groups {
			gx := float64(g)*gw + gw*0.1
			for s := range names {
				v := vals[g][s]
				h := y.pos(v, plotH)
				fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s %s: %s</title></rect>`,
					f1(gx+float64(s)*bw), f1(float64(plotH)-h), f1(math.Max(bw-1, 1)), f1(h), color(s), esc(label), esc(names[s]), esc(y.format(v)))
			}
			// Labels slant so long family names do not run into each other.
			lx := f1(gx + gw*0.4)
			fmt.Fprintf(b, `<text x="%s" y="%d" class="tick" text-anchor="end" transform="rotate(-30 %s %d)">%s<title>%s</title></text>`,
				lx, plotH+14, lx, plotH+14, esc(short(label)), esc(label))
		}
	}
	b.WriteString(`</g>`)
	if len(names) > 1 {
		items := make([]series, len(names))
		for i, n := range names {
			items[i] = series{name: n, color: color(i)}
		}
		legend(b, items)
	}
	b.WriteString("</svg>\n")
}
