package svgchart

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// CSS styles every chart by class; a page includes it once.
const CSS = `.chart{display:block;margin:12px 0;background:#fff}.chart .title{font-size:14px;font-weight:600}
.chart .tick,.chart .legend{font-size:11px;fill:#333}.chart .label{font-size:12px;fill:#333}
.chart .grid{stroke:#eee}.chart .axis{stroke:#888}.chart .ref{stroke:#999;stroke-dasharray:4,4}`

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"}

// Color returns the i-th color of the palette, cycling.
func Color(i int) string { return palette[i%len(palette)] }

// Frame is a chart's size and the margins around its plot, in pixels.
type Frame struct {
	Width, Height            int
	Left, Right, Top, Bottom int
}

// Wide is the sampler report's frame: a legend column on the right.
var Wide = Frame{Width: 760, Height: 380, Left: 80, Right: 190, Top: 36, Bottom: 76}

func (f Frame) plotW() int { return f.Width - f.Left - f.Right }
func (f Frame) plotH() int { return f.Height - f.Top - f.Bottom }

// Point is one data point.
type Point struct{ X, Y float64 }

// Series is one line, or one legend entry.
type Series struct {
	Name    string
	Points  []Point
	Color   string
	Dashed  bool
	Markers bool // a dot with a tooltip on every point
}

// Ref is a horizontal reference line across the plot; a named one has a
// legend entry, and an empty Color leaves the stylesheet's gray.
type Ref struct {
	Name  string
	Y     float64
	Color string
}

// maxLabel bounds a legend or bar label; the full name is its tooltip.
const maxLabel = 20

const legendLine, legendRow, legendColumn = 22, 18, 150

// LineChart draws series over two axes.
type LineChart struct {
	Title  string
	Frame  Frame
	X, Y   Axis
	Series []Series
	Refs   []Ref
	// Legend lists the entries to explain; nil: the named refs, then
	// every series.
	Legend []Series
	// LegendBelow puts the legend under the plot, three entries a row,
	// instead of in the right margin.
	LegendBelow bool
}

// Write appends the chart's <svg> element to b.
func (c LineChart) Write(b *strings.Builder) {
	f := c.Frame
	pw, ph := f.plotW(), f.plotH()
	open(b, f, c.Title)
	axes(b, f, c.X, c.Y)
	fmt.Fprintf(b, `<g transform="translate(%d,%d)">`, f.Left, f.Top)
	refs(b, f, c.Y, c.Refs)
	for _, s := range c.Series {
		if len(s.Points) == 0 {
			continue
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="`, s.Color, dash(s.Dashed))
		for i, p := range s.Points {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f1(c.X.Pos(p.X, float64(pw))))
			b.WriteByte(',')
			b.WriteString(f1(float64(ph) - c.Y.Pos(p.Y, float64(ph))))
		}
		fmt.Fprintf(b, `"><title>%s</title></polyline>`, esc(s.Name))
		if s.Markers {
			for _, p := range s.Points {
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="%s"><title>%s %s=%s: %s</title></circle>`,
					f1(c.X.Pos(p.X, float64(pw))), f1(float64(ph)-c.Y.Pos(p.Y, float64(ph))), s.Color,
					esc(s.Name), esc(c.X.Label), esc(format(c.X, p.X)), esc(format(c.Y, p.Y)))
			}
		}
	}
	b.WriteString(`</g>`)
	items := c.Legend
	if items == nil {
		for _, r := range c.Refs {
			if r.Name != "" {
				items = append(items, Series{Name: r.Name, Color: r.Color, Dashed: true})
			}
		}
		items = append(items, c.Series...)
	}
	legend(b, f, items, c.LegendBelow)
	b.WriteString("</svg>\n")
}

// BarChart draws grouped vertical bars: one group per label, one bar per
// name, colored by the palette.
type BarChart struct {
	Title  string
	Frame  Frame
	Groups []string
	Names  []string
	Values [][]float64 // [group][name]
	Y      Axis
	Refs   []Ref
}

// Write appends the chart's <svg> element to b.
func (c BarChart) Write(b *strings.Builder) {
	f := c.Frame
	pw, ph := f.plotW(), f.plotH()
	open(b, f, c.Title)
	axes(b, f, Axis{}, c.Y)
	fmt.Fprintf(b, `<g transform="translate(%d,%d)">`, f.Left, f.Top)
	refs(b, f, c.Y, c.Refs)
	if len(c.Groups) > 0 && len(c.Names) > 0 {
		gw := float64(pw) / float64(len(c.Groups))
		bw := gw * 0.8 / float64(len(c.Names))
		for g, label := range c.Groups {
			gx := float64(g)*gw + gw*0.1
			for s := range c.Names {
				v := c.Values[g][s]
				h := c.Y.Pos(v, float64(ph))
				fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s %s: %s</title></rect>`,
					f1(gx+float64(s)*bw), f1(float64(ph)-h), f1(math.Max(bw-1, 1)), f1(h), Color(s), esc(label), esc(c.Names[s]), esc(c.Y.Format(v)))
			}
			// Labels slant so long family names do not run into each other.
			lx := f1(gx + gw*0.4)
			fmt.Fprintf(b, `<text x="%s" y="%d" class="tick" text-anchor="end" transform="rotate(-30 %s %d)">%s<title>%s</title></text>`,
				lx, ph+14, lx, ph+14, esc(short(label)), esc(label))
		}
	}
	b.WriteString(`</g>`)
	if len(c.Names) > 1 {
		items := make([]Series, len(c.Names))
		for i, n := range c.Names {
			items[i] = Series{Name: n, Color: Color(i)}
		}
		legend(b, f, items, false)
	}
	b.WriteString("</svg>\n")
}

func open(b *strings.Builder, f Frame, title string) {
	fmt.Fprintf(b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`, f.Width, f.Height, f.Width, f.Height, esc(title))
	fmt.Fprintf(b, `<text x="%d" y="22" class="title">%s</text>`, f.Left, esc(title))
}

func axes(b *strings.Builder, f Frame, x, y Axis) {
	pw, ph := f.plotW(), f.plotH()
	fmt.Fprintf(b, `<g transform="translate(%d,%d)">`, f.Left, f.Top)
	for _, t := range y.TickValues() {
		py := float64(ph) - y.Pos(t, float64(ph))
		fmt.Fprintf(b, `<line x1="0" x2="%d" y1="%s" y2="%s" class="grid"/><text x="-6" y="%s" class="tick" text-anchor="end" dominant-baseline="middle">%s</text>`,
			pw, f1(py), f1(py), f1(py), esc(y.Format(t)))
	}
	if x.Format != nil {
		for _, t := range x.TickValues() {
			px := x.Pos(t, float64(pw))
			fmt.Fprintf(b, `<line x1="%s" x2="%s" y1="0" y2="%d" class="grid"/><text x="%s" y="%d" class="tick" text-anchor="middle">%s</text>`,
				f1(px), f1(px), ph, f1(px), ph+16, esc(x.Format(t)))
		}
	}
	fmt.Fprintf(b, `<line x1="0" x2="%d" y1="%d" y2="%d" class="axis"/><line x1="0" x2="0" y1="0" y2="%d" class="axis"/>`, pw, ph, ph, ph)
	fmt.Fprintf(b, `<text x="%d" y="%d" class="label" text-anchor="middle">%s</text>`, pw/2, ph+40, esc(x.Label))
	if y.Label != "" {
		// Rotated, left of the tick labels.
		fmt.Fprintf(b, `<text transform="translate(%d,%d) rotate(-90)" class="label" text-anchor="middle">%s</text>`, -(f.Left - 18), ph/2, esc(y.Label))
	}
	b.WriteString(`</g>`)
}

func refs(b *strings.Builder, f Frame, y Axis, rs []Ref) {
	for _, r := range rs {
		py := float64(f.plotH()) - y.Pos(r.Y, float64(f.plotH()))
		style := ""
		if r.Color != "" {
			style = ` style="stroke:` + r.Color + `"` // beats the stylesheet's gray
		}
		fmt.Fprintf(b, `<line x1="0" x2="%d" y1="%s" y2="%s" class="ref"%s/>`, f.plotW(), f1(py), f1(py), style)
	}
}

// legend draws one entry per item: in the right margin, one a row, or
// below the plot, three a row.
func legend(b *strings.Builder, f Frame, items []Series, below bool) {
	for i, s := range items {
		x, y := f.Left+f.plotW()+16, f.Top+8+i*legendRow
		if below {
			x, y = f.Left+(i%3)*legendColumn, f.Top+f.plotH()+52+(i/3)*legendRow
		}
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"%s/><text x="%d" y="%d" class="legend" dominant-baseline="middle">%s<title>%s</title></text>`,
			x, x+legendLine, y, y, s.Color, dash(s.Dashed), x+legendLine+6, y, esc(short(s.Name)), esc(s.Name))
	}
}

func format(a Axis, v float64) string {
	if a.Format == nil {
		return Trim(v)
	}
	return a.Format(v)
}

func dash(dashed bool) string {
	if dashed {
		return ` stroke-dasharray="5,3"`
	}
	return ""
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string { return html.EscapeString(s) }

func short(s string) string {
	if len(s) <= maxLabel {
		return s
	}
	return s[:maxLabel-1] + "…"
}
