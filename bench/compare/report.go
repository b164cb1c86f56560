package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
)

func numCPU() int { return runtime.NumCPU() }

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes one aligned table per pipeline depth.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "profile %s, %d connections, %.0f s per measurement, %d CPUs, %s\n",
		r.Profile, r.Conns, r.Duration, r.CPUs, r.Date.Format("2006-01-02 15:04 MST"))
	if n := r.rounds(); n > 1 {
		fmt.Fprintf(w, "%d interleaved rounds: medians; each ratio is the median of the ratios within a round\n", n)
	}
	var depths []int
	seen := map[int]bool{}
	for _, row := range r.Rows {
		if !seen[row.Pipeline] {
			seen[row.Pipeline] = true
			depths = append(depths, row.Pipeline)
		}
	}
	for _, d := range depths {
		fmt.Fprintf(w, "\npipeline depth %d\n", d)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "target\tops/s\tp50 µs\tp99 µs\tp999 µs\tcpu s/M req\tbackend cpu s/M req\t× memcached\t× twemproxy\tcpu × memcached\tcpu × twemproxy\tcpu × single\terrors\t")
		for _, row := range r.Rows {
			if row.Pipeline != d {
				continue
			}
			if row.Result == nil {
				fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\tfailed\t\n", row.Target)
				continue
			}
			res := row.Result
			proxy, backend := "-", "-"
			if row.CPUMeasured {
				proxy = fmt.Sprintf("%.2f", row.ProxyCPUPerM)
				if row.Target != TargetMemcached && row.Target != TargetStrataEmbedded {
					backend = fmt.Sprintf("%.2f", row.BackendCPUPerM)
				}
			}
			fmt.Fprintf(tw, "%s\t%.0f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n",
				row.Target, res.OpsPerSec, res.Latency.P50, res.Latency.P99, res.Latency.P999,
				proxy, backend, ratio(row.VsMemcached), ratio(row.VsTwemproxy),
				ratio(row.CPUVsMemcached), ratio(row.CPUVsTwemproxy), ratio(row.CPUVsSingle), res.Errors)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Idle) > 0 {
		fmt.Fprintf(w, "\nidle (no clients)\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "target\tseconds\tcpu ms/s\twakeups/s\terror\t")
		for _, row := range r.Idle {
			fmt.Fprintf(tw, "%s\t%.0f\t%.2f\t%.0f\t%s\t\n", row.Target, row.Seconds, row.CPUMsPerSec, row.SlicesPerSec, row.Err)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.IdleConns) > 0 {
		fmt.Fprintf(w, "\nidle connections (resident memory of the process under test)\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "target\tconns\tRSS before MiB\tRSS after MiB\tbytes/conn\terror\t")
		for _, row := range r.IdleConns {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.0f\t%s\t\n", row.Target, row.Conns,
				float64(row.RSSBefore)/(1<<20), float64(row.RSSAfter)/(1<<20), row.PerConn, row.Err)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Open) > 0 {
		fmt.Fprintf(w, "\nopen loop, fractions of %.0f ops/s (latency from each request's scheduled time; medians of the rounds)\n", r.Capacity)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "target\tload\trate/s\tops/s\tp50 µs\tp99 µs\tp999 µs\t+p50 µs\t+p99 µs\t+p999 µs\tsent late p99 µs\trounds\tloadavg\terrors\t")
		for _, o := range r.Open {
			fmt.Fprintf(tw, "%s\t%.0f%%\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%s\t%s\t%s\t%.1f\t%d\t%.2f\t%d\t\n",
				o.Target, 100*o.Fraction, o.Rate, o.OpsPerSec, o.P50, o.P99, o.P999,
				added(o, o.AddedP50), added(o, o.AddedP99), added(o, o.AddedP999), o.SendLagP99, o.Rounds, o.LoadAvg, o.Errors)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, o := range r.Open {
			if o.Err != "" {
				fmt.Fprintf(w, "%s (open loop %.0f%%): %s\n", o.Target, 100*o.Fraction, o.Err)
			}
		}
	}
	fmt.Fprintln(w)
	said := map[string]bool{}
	for _, row := range r.Rows {
		if row.Err != "" && !said[row.Target+row.Err] {
			said[row.Target+row.Err] = true
			fmt.Fprintf(w, "%s (pipeline %d): %s\n", row.Target, row.Pipeline, row.Err)
		}
	}
	return nil
}

// rounds is the most rounds any row was measured in.
func (r *Report) rounds() int {
	n := 0
	for _, row := range r.Rows {
		n = max(n, row.Rounds)
	}
	return n
}

// added spells a latency added over memcached, "-" for memcached itself
// or when memcached was not measured.
func added(o OpenRow, v float64) string {
	if !o.based {
		return "-"
	}
	return fmt.Sprintf("%+.1f", v)
}

func ratio(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}
