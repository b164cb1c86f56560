package allocator

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteJSON prints s as one JSON object.
func (s *Stress) WriteJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(s)
}

// WriteTable prints s for a terminal.
func (s *Stress) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "problem\t%d shards on %d servers, metrics %v, seed %d\n", s.Shards, s.Servers, s.Metrics, s.Seed)
	fmt.Fprintf(tw, "solve time\t%.3f s wall, %.3f s CPU (%d steps)\n", s.SolveSeconds, s.SolveCPUSeconds, s.Steps)
	fmt.Fprintf(tw, "violations\t%d before, %d after\n", s.ViolationsBefore, s.ViolationsAfter)
	fmt.Fprintf(tw, "max/mean\t%.4f before, %.4f after (per metric %.4f)\n", s.MaxOverMeanStart, s.MaxOverMean, s.PerMetric)
	fmt.Fprintf(tw, "moves\t%d (lower bound %d, ratio %.4f)\n", s.Moves, s.MinMoves, s.MovesOverMin)
	if f := s.Failover; f != nil {
		fmt.Fprintf(tw, "failover\t%d servers die, %d replicas unplaced: emergency placed %d in %.3f s (%.3f s CPU) on %d servers (at most %d each), %d left\n",
			f.DeadServers, f.Unplaced, f.Placed, f.Seconds, f.CPUSeconds, f.Targets, f.MaxPerTarget, f.LeftUnplaced)
		fmt.Fprintf(tw, "then periodic\t%d moves, max/mean %.4f\n", f.PeriodicMoves, f.MaxOverMean)
	}
	if s.Exhausted {
		fmt.Fprintf(tw, "note\tthe step budget ran out\n")
	}
	return tw.Flush()
}

// WriteJSON prints c as one JSON object.
func (c *Comparison) WriteJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(c)
}

// WriteTable prints c side by side.
func (c *Comparison) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%d shards (skewed) on %d servers, seed %d: max/mean server load\n", c.Shards, c.Servers, c.Seed)
	fmt.Fprint(tw, "placement")
	for _, m := range c.Metrics {
		fmt.Fprintf(tw, "\t%s", m)
	}
	fmt.Fprint(tw, "\tworst\tmoves\n")
	for _, s := range append([]Side{c.Static}, c.Aware...) {
		fmt.Fprint(tw, s.Name)
		for _, v := range s.PerMetric {
			fmt.Fprintf(tw, "\t%.4f", v)
		}
		fmt.Fprintf(tw, "\t%.4f\t%d\n", s.MaxOverMean, s.Moves)
	}
	return tw.Flush()
}
