package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/strata-cache/strata/internal/svgchart"
	"github.com/strata-cache/strata/sampler/model"
	"github.com/strata-cache/strata/tiers/promote"
)

// maxChartFamilies bounds the families drawn in one chart; the tables list
// them all.
const maxChartFamilies = 10

// maxCurveFamilies bounds the families in the hotness chart, whose two
// curves per family crowd faster than bars.
const maxCurveFamilies = 6

const css = `body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}
th{background:#f5f5f5}td:first-child,th:first-child{text-align:left}.meta{color:#555;font-size:14px}
` + svgchart.CSS + `
.warn{color:#a33}`

// WriteHTML renders r as one self-contained HTML page with inline SVG
// charts: no scripts, no external references.
func WriteHTML(w io.Writer, r *Report) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>strata sample report</title><style>")
	b.WriteString(css)
	b.WriteString("</style></head><body>\n<h1>strata sample report</h1>\n")
	fmt.Fprintf(&b, `<p class="meta">window %s`, esc(r.Window))
	if r.Records > 0 {
		fmt.Fprintf(&b, ` (%s to %s)`, r.WindowStart.Format("2006-01-02 15:04:05Z"), r.WindowEnd.Format("2006-01-02 15:04:05Z"))
	}
	fmt.Fprintf(&b, ` · sample rate %d · %d records · %d skipped lines · %d clusters · %d families · L1 budget %s per family and cluster</p>`+"\n",
		r.SampleRate, r.Records, r.SkippedLines, len(r.Clusters), len(r.Families), esc(budgetText(r.Budget)))
	for _, x := range r.Warnings {
		fmt.Fprintf(&b, "<p class=\"warn\">%s</p>\n", esc(x))
	}

	fams := r.Families
	if len(fams) > maxChartFamilies {
		fams = fams[:maxChartFamilies]
	}
	names := clusterNames(r)

	b.WriteString("<h2>Working sets and duplication</h2>\n")
	wssChart(&b, fams, names)
	dupChart(&b, fams, len(names))
	b.WriteString("<h2>Hotness</h2>\n")
	hotnessChart(&b, fams)
	b.WriteString("<h2>Promotion model</h2>\n")
	modelChart(&b)

	rows := append(append([]Family(nil), r.Families...), r.Overall)
	b.WriteString("<h2>Families</h2>\n<table><tr><th>family</th><th>accesses</th><th>unique keys</th><th>region WSS</th>")
	for _, n := range names {
		fmt.Fprintf(&b, "<th>%s WSS</th>", esc(n))
	}
	b.WriteString("<th>dup factor</th><th>hot10 share</th><th>p50/p90/p99 acc</th><th>h1</th><th>h2</th><th>combined</th><th>N</th></tr>\n")
	for _, f := range rows {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%s</td>", esc(f.Family), f.Accesses, f.UniqueKeys, FormatBytes(f.RegionWSSBytes))
		for _, n := range names {
			fmt.Fprintf(&b, "<td>%s</td>", FormatBytes(f.ClusterWSSBytes[n]))
		}
		fmt.Fprintf(&b, "<td>%.3f</td><td>%s</td><td>%d/%d/%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			f.DuplicationFactor, pct(f.Hot10TrafficShare), f.Hotness.P50, f.Hotness.P90, f.Hotness.P99,
			pct(f.HitRatio.L1), pct(f.HitRatio.L2), pct(f.HitRatio.Combined), esc(threshText(f)))
	}
	b.WriteString("</table>\n")

	b.WriteString("<h2>Predicted L1 per threshold</h2>\n<p class=\"meta\">largest per-cluster L1 footprint / share of reads served by L1; the recommended N has the most L1 hits within the budget.</p>\n")
	b.WriteString("<table><tr><th>family</th>")
	for _, n := range model.Thresholds {
		fmt.Fprintf(&b, "<th>N=%d</th>", n)
	}
	b.WriteString("<th>budget</th><th>recommended</th><th>observed rate</th><th>implied N</th><th>promoted keys observed / model</th></tr>\n")
	for _, f := range rows {
		fmt.Fprintf(&b, "<tr><td>%s</td>", esc(f.Family))
		for _, p := range f.Promotion.Predictions {
			fmt.Fprintf(&b, "<td>%s / %s</td>", FormatBytes(p.L1FootprintBytes), pct(p.L1TrafficShare))
		}
		implied := "-"
		if f.Promotion.ImpliedThreshold > 0 {
			implied = strconv.Itoa(f.Promotion.ImpliedThreshold)
		}
		fmt.Fprintf(&b, "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s / %s</td></tr>\n", FormatBytes(f.Promotion.BudgetBytes), esc(threshText(f)),
			pct(f.Promotion.ObservedRate), implied, pct(f.Promotion.ObservedPromotedKeyShare), pct(f.Promotion.ModelPromotedKeyShare))
	}
	b.WriteString("</table>\n")

	b.WriteString("<h2>Clusters</h2>\n<table><tr><th>cluster</th><th>region</th><th>accesses</th><th>unique keys</th><th>working set</th><th>h1</th><th>h2</th><th>combined</th></tr>\n")
	for _, c := range r.Clusters {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(c.Name), esc(c.Region),
			c.Accesses, c.UniqueKeys, FormatBytes(c.WSSBytes), pct(c.HitRatio.L1), pct(c.HitRatio.L2), pct(c.HitRatio.Combined))
	}
	b.WriteString("</table>\n")

	b.WriteString("<h2>Promotion probability P(N, k) = 1 − (1 − 1/N)<sup>k</sup></h2>\n<table><tr><th>trials k</th>")
	for _, n := range model.Thresholds {
		fmt.Fprintf(&b, "<th>N=%d</th>", n)
	}
	b.WriteString("</tr>\n")
	for _, k := range modelTrials {
		fmt.Fprintf(&b, "<tr><td>%d</td>", k)
		for _, n := range model.Thresholds {
			fmt.Fprintf(&b, "<td>%s</td>", pct(promote.Probability(uint32(n), k)))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func pctAxis(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) + "%" }

func bytesAxis(v float64) string { return FormatBytes(uint64(math.Max(v, 0))) }

func wssChart(b *strings.Builder, fams []Family, clusters []string) {
	groups := make([]string, len(fams))
	names := append(append([]string(nil), clusters...), "region")
	vals := make([][]float64, len(fams))
	top := 1.0
	for i, f := range fams {
		groups[i] = f.Family
		vals[i] = make([]float64, len(names))
		for j, c := range clusters {
			vals[i][j] = float64(f.ClusterWSSBytes[c])
		}
		vals[i][len(clusters)] = float64(f.RegionWSSBytes)
		for _, v := range vals[i] {
			top = math.Max(top, v)
		}
	}
	svgchart.BarChart{Title: "Working set per cluster and for the region", Frame: svgchart.Wide, Groups: groups, Names: names, Values: vals,
		Y: svgchart.Axis{Label: "working set", Min: 0, Max: top * 1.05, Binary: true, Format: bytesAxis}}.Write(b)
}

func dupChart(b *strings.Builder, fams []Family, clusters int) {
	groups := make([]string, len(fams))
	vals := make([][]float64, len(fams))
	top := math.Max(float64(clusters), 1)
	for i, f := range fams {
		groups[i] = f.Family
		vals[i] = []float64{f.DuplicationFactor}
		top = math.Max(top, f.DuplicationFactor)
	}
	svgchart.BarChart{Title: fmt.Sprintf("Duplication factor per family (between 1 and %d clusters)", clusters), Frame: svgchart.Wide,
		Groups: groups, Names: []string{"duplication factor"}, Values: vals,
		Y:    svgchart.Axis{Label: "Σ cluster WSS ÷ region WSS", Min: 0, Max: top * 1.05, Format: func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }},
		Refs: []svgchart.Ref{{Y: 1}, {Y: float64(clusters)}}}.Write(b)
}

func hotnessChart(b *strings.Builder, fams []Family) {
	var ss, items []svgchart.Series
	maxAcc := 10.0
	if len(fams) > maxCurveFamilies {
		fams = fams[:maxCurveFamilies]
	}
	for i, f := range fams {
		var keys, traffic []svgchart.Point
		for _, p := range f.Hotness.CDF {
			keys = append(keys, svgchart.Point{X: float64(p.Accesses), Y: p.KeyShare})
			traffic = append(traffic, svgchart.Point{X: float64(p.Accesses), Y: p.TrafficShare})
		}
		maxAcc = math.Max(maxAcc, float64(f.Hotness.Max))
		ss = append(ss, svgchart.Series{Name: f.Family + " keys", Points: keys, Color: svgchart.Color(i)},
			svgchart.Series{Name: f.Family + " traffic", Points: traffic, Color: svgchart.Color(i), Dashed: true})
		items = append(items, svgchart.Series{Name: f.Family, Color: svgchart.Color(i)})
	}
	svgchart.LineChart{Title: "Hotness CDF: share of keys (solid) and of accesses (dashed) by accesses per key", Frame: svgchart.Wide,
		X: svgchart.Axis{Label: "accesses per key (log)", Min: 1, Max: maxAcc, Scale: svgchart.Log10,
			Format: func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }},
		Y:      svgchart.Axis{Label: "cumulative share", Min: 0, Max: 1, Format: pctAxis},
		Series: ss, Legend: items}.Write(b)
}

func modelChart(b *strings.Builder) {
	var ss []svgchart.Series
	for i, n := range model.Thresholds {
		pts := make([]svgchart.Point, 0, model.MaxTrials)
		for k := 1; k <= model.MaxTrials; k++ {
			pts = append(pts, svgchart.Point{X: float64(k), Y: promote.Probability(uint32(n), k)})
		}
		ss = append(ss, svgchart.Series{Name: "N = " + strconv.Itoa(n), Points: pts, Color: svgchart.Color(i)})
	}
	svgchart.LineChart{Title: "Promotion probability against trials", Frame: svgchart.Wide, X: svgchart.Axis{Label: "trials (reads of the key)", Min: 0, Max: model.MaxTrials,
		Format: func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }},
		Y: svgchart.Axis{Label: "P(promoted)", Min: 0, Max: 1, Format: pctAxis}, Series: ss}.Write(b)
}

func esc(s string) string { return html.EscapeString(s) }
