package svgchart

import (
	"math"
	"strings"
	"testing"
)

func TestCoverSpansTheRange(t *testing.T) {
	for _, r := range [][2]float64{{8.24, 87.89}, {1.03, 1.42}, {5, 5}, {0, 0.004}, {-3, 250}, {math.Inf(1), math.Inf(-1)}} {
		ticks := Cover(r[0], r[1])
		lo, hi := r[0], r[1]
		if math.IsInf(lo, 0) {
			lo, hi = 0, 1
		}
		if len(ticks) < 2 || ticks[0] > lo || ticks[len(ticks)-1] < hi {
			t.Errorf("ticks %v do not cover [%v, %v]", ticks, r[0], r[1])
		}
		if len(ticks) > 8 {
			t.Errorf("%d ticks for [%v, %v]", len(ticks), r[0], r[1])
		}
	}
	if got := Cover(0, 0.3); got[len(got)-1] != 0.3 {
		t.Errorf("Cover(0, 0.3) ends at %v, want exactly 0.3", got[len(got)-1])
	}
}

func TestStep(t *testing.T) {
	for _, c := range []struct {
		span   float64
		binary bool
		want   float64
	}{
		{100, false, 20}, {1, false, 0.2}, {12, false, 2.5}, {40, false, 10},
		{300 << 20, true, 100 << 20}, // MiB multiples, not powers of ten bytes
		{5000, true, 1000},           // below 1 KiB per step: plain decimals
	} {
		if got := Step(c.span, c.binary); got != c.want {
			t.Errorf("Step(%v, %v) = %v, want %v", c.span, c.binary, got, c.want)
		}
	}
}

func TestAxis(t *testing.T) {
	lin := Axis{Min: 0, Max: 1}
	if got := lin.TickValues(); len(got) != 6 || got[5] != 1 {
		t.Errorf("linear ticks %v", got)
	}
	lg := Axis{Min: 1, Max: 5000, Scale: Log10}
	if got := lg.TickValues(); len(got) != 4 || got[3] != 1000 {
		t.Errorf("log10 ticks %v", got)
	}
	l2 := Axis{Min: 8, Max: 128, Scale: Log2}
	if got := l2.TickValues(); len(got) != 5 || got[0] != 8 || got[4] != 128 {
		t.Errorf("log2 ticks %v", got)
	}
	if p := l2.Pos(32, 100); p != 50 {
		t.Errorf("log2 Pos(32) = %v, want 50", p)
	}
	if p := lg.Pos(0.5, 100); p != 0 {
		t.Errorf("a value below a log axis's Min at %v, want 0", p)
	}
	if p := (Axis{Min: 2, Max: 2}).Pos(2, 100); p != 0 {
		t.Errorf("empty axis Pos %v", p)
	}
}

func TestTrim(t *testing.T) {
	for v, want := range map[float64]string{2.5: "2.5", 3: "3", 0.126: "0.13", -0.001: "0", 1.05: "1.05"} {
		if got := Trim(v); got != want {
			t.Errorf("Trim(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestChartsAreWellFormed(t *testing.T) {
	var b strings.Builder
	LineChart{
		Title: "a <b>", Frame: Wide,
		X:      Axis{Label: "N", Min: 8, Max: 32, Scale: Log2, Ticks: []float64{8, 16, 32}, Format: Trim},
		Y:      Axis{Label: "ratio", Min: 0, Max: 1, Format: Trim},
		Series: []Series{{Name: "s", Points: []Point{{8, 0.5}, {32, 1}}, Color: Color(0), Markers: true}, {Name: "empty"}},
		Refs:   []Ref{{Name: "base", Y: 0.25, Color: "#555"}, {Y: 0.75}},
	}.Write(&b)
	BarChart{
		Title: "bars", Frame: Wide, Groups: []string{"g1", "a group name longer than twenty"}, Names: []string{"x", "y"},
		Values: [][]float64{{1, 2}, {3, 4}}, Y: Axis{Label: "n", Min: 0, Max: 4, Format: Trim},
	}.Write(&b)
	out := b.String()
	for what, n := range map[string]int{
		"<svg": 2, "</svg>": 2, "<polyline": 1, "<circle": 2, "<rect": 4, `class="ref"`: 2,
		`style="stroke:#555"`: 1, "a &lt;b&gt;": 2, "a group name longer…": 1,
		`class="legend"`: 5, // base, s and empty; x and y
	} {
		if got := strings.Count(out, what); got != n {
			t.Errorf("%d × %q, want %d", got, what, n)
		}
	}
	if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
		t.Error("a coordinate is not a number")
	}
}
