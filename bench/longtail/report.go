package longtail

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Report is the whole experiment: the L1-only layout first, then the
// layered layout at each threshold.
type Report struct {
	Profile        string    `json:"profile"`
	Clusters       int       `json:"clusters"`
	Alpha          float64   `json:"alpha"`
	Overlap        float64   `json:"overlap"`
	TotalMemory    int64     `json:"total_memory"`
	ThinDivisor    int       `json:"thin_divisor"`
	WarmupFraction float64   `json:"warmup_fraction"`
	Date           time.Time `json:"date"`
	Outcomes       []Outcome `json:"outcomes"`
}

// Baseline is the L1-only outcome, if measured.
func (r *Report) Baseline() *Outcome {
	for i := range r.Outcomes {
		if r.Outcomes[i].Threshold == 0 {
			return &r.Outcomes[i]
		}
	}
	return nil
}

// At returns the layered outcome with threshold n, if measured.
func (r *Report) At(n uint32) *Outcome {
	for i := range r.Outcomes {
		if r.Outcomes[i].Threshold == n {
			return &r.Outcomes[i]
		}
	}
	return nil
}

// Redundant is the share of all cached bytes that are extra copies of a key
// cached elsewhere: 1 − 1/DupAll.
func (o *Outcome) Redundant() float64 {
	if o.DupAll == 0 {
		return 0
	}
	return 1 - 1/o.DupAll
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// WriteTable writes the outcomes as an aligned table and the comparison the
// experiment is about: N = 32 against L1 only.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "profile %s: %d clusters, Zipf %.2f, overlap %.2f; %.0f MiB in total; thin L1 = 1/%d of the L1-only size\n\n",
		r.Profile, r.Clusters, r.Alpha, r.Overlap, mib(r.TotalMemory), r.ThinDivisor)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "layout\tL1 hit %\tL2 hit %\tcombined %\tdup L1s\tdup all tiers\tredundant %\tL1 used MiB\tL1 MiB\tL2 used MiB\tL2 share %\tpromotions\t")
	for _, o := range r.Outcomes {
		l2hit, l2used, l2share := "-", "-", "-"
		if o.Threshold > 0 {
			l2hit = fmt.Sprintf("%.2f", 100*o.L2HitRatio)
			l2used = fmt.Sprintf("%.1f", mib(o.L2Used))
			l2share = fmt.Sprintf("%.1f", 100*o.L2Share)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%d\t\n",
			o.Layout, 100*o.L1HitRatio, l2hit, 100*o.Combined, o.DupL1, o.DupAll, 100*o.Redundant(),
			mib(o.L1Used), mib(o.L1Memory), l2used, l2share, o.Promotions)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	base, n32 := r.Baseline(), r.At(32)
	if base == nil || n32 == nil {
		return nil
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	fmt.Fprintf(w, "\nN=32 vs L1 only: combined hit ratio %.2f %% vs %.2f %% (goal: at least L1-only's) — %s\n",
		100*n32.Combined, 100*base.Combined, verdict(n32.Combined >= base.Combined))
	fmt.Fprintf(w, "duplication, all tiers: %.2f vs %.2f (goal: at most half) — %s\n",
		n32.DupAll, base.DupAll, verdict(n32.DupAll <= base.DupAll/2))
	fmt.Fprintf(w, "cached bytes that are extra copies of a key cached elsewhere: %.1f %% vs %.1f %%\n",
		100*n32.Redundant(), 100*base.Redundant())
	fmt.Fprintf(w, "duplication among the L1s alone: %.2f vs %.2f (thin L1s hold the hot keys every cluster reads)\n",
		n32.DupL1, base.DupL1)
	return nil
}
