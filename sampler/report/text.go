package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/strata-cache/strata/sampler/model"
	"github.com/strata-cache/strata/tiers/promote"
)

// modelTrials are the rows of the probability table in the text and HTML
// forms (the JSON has every k up to 200).
var modelTrials = []int{1, 2, 5, 10, 20, 32, 50, 73, 100, 150, 200}

// FormatBytes spells n with a binary unit: 512 B, 1.5 KiB, 12.0 MiB.
func FormatBytes(n uint64) string {
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}

func pct(f float64) string { return strconv.FormatFloat(100*f, 'f', 2, 64) + "%" }

// clusterNames lists the clusters of r in report order.
func clusterNames(r *Report) []string {
	names := make([]string, len(r.Clusters))
	for i, c := range r.Clusters {
		names[i] = c.Name
	}
	return names
}

// WriteText renders r as aligned plain-text tables.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "strata sample report\n")
	if r.Records == 0 {
		fmt.Fprintf(&b, "window %s: no records\n", r.Window)
	} else {
		fmt.Fprintf(&b, "window %s  %s .. %s\n", r.Window, r.WindowStart.Format("2006-01-02T15:04:05Z"), r.WindowEnd.Format("2006-01-02T15:04:05Z"))
	}
	fmt.Fprintf(&b, "sample rate %d  records %d  skipped lines %d  clusters %d  families %d  L1 budget %s per family and cluster\n",
		r.SampleRate, r.Records, r.SkippedLines, len(r.Clusters), len(r.Families), budgetText(r.Budget))

	names := clusterNames(r)
	tw := tabwriter.NewWriter(&b, 2, 8, 2, ' ', 0)
	section := func(title string) {
		tw.Flush()
		fmt.Fprintf(&b, "\n%s\n", title)
	}

	section("CLUSTERS")
	fmt.Fprintln(tw, "cluster\tregion\taccesses\tunique keys\tworking set\th1\th2\tcombined\t")
	for _, c := range r.Clusters {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t\n", c.Name, c.Region, c.Accesses, c.UniqueKeys, FormatBytes(c.WSSBytes),
			pct(c.HitRatio.L1), pct(c.HitRatio.L2), pct(c.HitRatio.Combined))
	}

	rows := append(append([]Family(nil), r.Families...), r.Overall)
	section("FAMILIES (scaled by the sample rate; * is all keys)")
	hdr := "family\taccesses\tunique keys\tregion wss\t"
	for _, n := range names {
		hdr += n + " wss\t"
	}
	fmt.Fprintln(tw, hdr+"dup factor\thot10 share\th1\th2\tcombined\tN\t")
	for _, f := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t", f.Family, f.Accesses, f.UniqueKeys, FormatBytes(f.RegionWSSBytes))
		for _, n := range names {
			fmt.Fprintf(tw, "%s\t", FormatBytes(f.ClusterWSSBytes[n]))
		}
		fmt.Fprintf(tw, "%.3f\t%s\t%s\t%s\t%s\t%s\t\n", f.DuplicationFactor, pct(f.Hot10TrafficShare),
			pct(f.HitRatio.L1), pct(f.HitRatio.L2), pct(f.HitRatio.Combined), threshText(f))
	}

	section("HOTNESS (accesses per sampled key)")
	fmt.Fprintln(tw, "family\tsampled keys\tp50\tp90\tp99\tmax\thot10 share\t")
	for _, f := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", f.Family, f.SampledKeys, f.Hotness.P50, f.Hotness.P90, f.Hotness.P99, f.Hotness.Max, pct(f.Hot10TrafficShare))
	}

	section("PROMOTION MODEL (per N: largest per-cluster L1 footprint / L1 share of reads)")
	hdr = "family\t"
	for _, n := range model.Thresholds {
		hdr += "N=" + strconv.Itoa(n) + "\t"
	}
	fmt.Fprintln(tw, hdr+"budget\trecommended\tobserved rate\timplied N\tpromoted keys obs/model\t")
	for _, f := range rows {
		fmt.Fprintf(tw, "%s\t", f.Family)
		for _, p := range f.Promotion.Predictions {
			fmt.Fprintf(tw, "%s / %s\t", FormatBytes(p.L1FootprintBytes), pct(p.L1TrafficShare))
		}
		implied := "-"
		if f.Promotion.ImpliedThreshold > 0 {
			implied = strconv.Itoa(f.Promotion.ImpliedThreshold)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s / %s\t\n", FormatBytes(f.Promotion.BudgetBytes), threshText(f),
			pct(f.Promotion.ObservedRate), implied, pct(f.Promotion.ObservedPromotedKeyShare), pct(f.Promotion.ModelPromotedKeyShare))
	}

	section("PROMOTION PROBABILITY P(N, k) = 1 - (1 - 1/N)^k")
	hdr = "trials k\t"
	for _, n := range model.Thresholds {
		hdr += "N=" + strconv.Itoa(n) + "\t"
	}
	fmt.Fprintln(tw, hdr)
	for _, k := range modelTrials {
		fmt.Fprintf(tw, "%d\t", k)
		for _, n := range model.Thresholds {
			fmt.Fprintf(tw, "%s\t", pct(promote.Probability(uint32(n), k)))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if len(r.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		ws := append([]string(nil), r.Warnings...)
		sort.Strings(ws)
		for _, x := range ws {
			fmt.Fprintf(&b, "  %s\n", x)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func threshText(f Family) string {
	switch {
	case f.RecommendedThreshold == 0:
		return "-"
	case f.Promotion.OverBudget:
		return strconv.Itoa(f.RecommendedThreshold) + " (over budget)"
	}
	return strconv.Itoa(f.RecommendedThreshold)
}

func budgetText(s string) string {
	if strings.HasSuffix(s, "%") {
		return s + " of the family's region WSS"
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return FormatBytes(n)
	}
	return s
}
