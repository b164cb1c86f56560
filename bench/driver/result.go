package driver

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/strata-cache/strata/bench/workload"
)

// Latencies are recorded in nanoseconds from 100 ns to 60 s with three
// significant digits: 0.1 % resolution at every scale.
const (
	histMin    = 100
	histMax    = int64(60 * time.Second)
	histDigits = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// record adds one latency, clamping to the histogram's range so an outlier
// is counted rather than lost.
func record(h *hdrhistogram.Histogram, d time.Duration) {
	v := int64(d)
	if v < histMin {
		v = histMin
	} else if v > histMax {
		v = histMax
	}
	_ = h.RecordValue(v) // cannot fail inside the range
}

// counters are one connection's tallies. A counters value is owned by one
// goroutine and merged after the run.
type counters struct {
	ops       [5]int64 // answered requests by workload.Op
	hits      int64
	misses    int64
	stored    int64
	notStored int64
	deleted   int64
	notFound  int64
	errReply  int64 // ERROR / CLIENT_ERROR / SERVER_ERROR replies
	lost      int64 // requests sent on a connection that failed before replying
	badSize   int64 // hits whose value length was not the key's size
	fills     int64 // sets issued to refill a read miss
	fillsLost int64 // fills dropped because the queue was full (open loop)
	redials   int64
	errLine   string
	firstErr  error
}

func (c *counters) count(r *workload.Request, out outcome, info replyInfo) {
	c.ops[r.Op]++
	switch out {
	case outHit:
		c.hits++
		if info.badSize {
			c.badSize++
		}
	case outMiss:
		c.misses++
	case outStored:
		c.stored++
	case outNotStored:
		c.notStored++
	case outDeleted:
		c.deleted++
	case outNotFound:
		c.notFound++
	case outError:
		c.errReply++
		if c.errLine == "" {
			c.errLine = info.errLine
		}
	}
}

func (c *counters) fail(err error) {
	if c.firstErr == nil {
		c.firstErr = err
	}
}

func (c *counters) add(o *counters) {
	for i := range c.ops {
		c.ops[i] += o.ops[i]
	}
	c.hits += o.hits
	c.misses += o.misses
	c.stored += o.stored
	c.notStored += o.notStored
	c.deleted += o.deleted
	c.notFound += o.notFound
	c.errReply += o.errReply
	c.lost += o.lost
	c.badSize += o.badSize
	c.fills += o.fills
	c.fillsLost += o.fillsLost
	c.redials += o.redials
	if c.errLine == "" {
		c.errLine = o.errLine
	}
	if c.firstErr == nil {
		c.firstErr = o.firstErr
	}
}

// Latency is a latency summary in microseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Result is the outcome of one run.
type Result struct {
	Target   string  `json:"target"`
	Profile  string  `json:"profile"`
	Mode     string  `json:"mode"` // "closed" or "open"
	Conns    int     `json:"conns"`
	Pipeline int     `json:"pipeline"`
	Rate     float64 `json:"target_rate,omitempty"`
	// Seconds is the measured wall time of the run.
	Seconds float64 `json:"seconds"`
	// Requests counts the requests that got a reply (any reply).
	Requests  int64   `json:"requests"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Ops counts answered requests by command.
	Ops    map[string]int64 `json:"ops"`
	Hits   int64            `json:"hits"`
	Misses int64            `json:"misses"`
	// HitRatio is hits ÷ (hits + misses) over reads.
	HitRatio  float64 `json:"hit_ratio"`
	Stored    int64   `json:"stored"`
	NotStored int64   `json:"not_stored"`
	Deleted   int64   `json:"deleted"`
	NotFound  int64   `json:"delete_not_found"`
	// Errors is error replies plus requests lost to failed connections.
	Errors    int64   `json:"errors"`
	Lost      int64   `json:"lost"`
	BadSize   int64   `json:"bad_value_size"`
	Fills     int64   `json:"fills"`
	FillsLost int64   `json:"fills_dropped,omitempty"`
	Redials   int64   `json:"redials"`
	Latency   Latency `json:"latency_us"`
	// SendLag, in open loop, is how late the generator wrote each batch
	// after its scheduled time: the part of Latency that is the
	// generator's own, which every target shares.
	SendLag  *Latency `json:"send_lag_us,omitempty"`
	FirstErr string   `json:"first_error,omitempty"`

	hist *hdrhistogram.Histogram
}

// Histogram returns the merged latency histogram (nanoseconds).
func (r *Result) Histogram() *hdrhistogram.Histogram { return r.hist }

func newResult(cfg *Config, c *counters, h *hdrhistogram.Histogram, elapsed time.Duration) *Result {
	r := &Result{
		Target: cfg.Target, Profile: cfg.Workload.Profile().Name, Mode: "closed",
		Conns: cfg.Conns, Pipeline: cfg.Pipeline, Rate: cfg.Rate,
		Seconds: elapsed.Seconds(), Ops: map[string]int64{},
		Hits: c.hits, Misses: c.misses, Stored: c.stored, NotStored: c.notStored,
		Deleted: c.deleted, NotFound: c.notFound,
		Errors: c.errReply + c.lost, Lost: c.lost, BadSize: c.badSize,
		Fills: c.fills, FillsLost: c.fillsLost, Redials: c.redials, hist: h,
	}
	if cfg.Rate > 0 {
		r.Mode = "open"
	}
	for op, n := range c.ops {
		r.Requests += n
		if n > 0 {
			r.Ops[workload.Op(op).String()] = n
		}
	}
	if r.Seconds > 0 {
		r.OpsPerSec = float64(r.Requests) / r.Seconds
	}
	if c.hits+c.misses > 0 {
		r.HitRatio = float64(c.hits) / float64(c.hits+c.misses)
	}
	r.Latency = *summarize(h)
	switch {
	case c.firstErr != nil:
		r.FirstErr = c.firstErr.Error()
	case c.errLine != "":
		r.FirstErr = c.errLine
	}
	return r
}

// summarize is h's percentiles in microseconds.
func summarize(h *hdrhistogram.Histogram) *Latency {
	us := func(v int64) float64 { return float64(v) / 1e3 }
	return &Latency{
		P50: us(h.ValueAtQuantile(50)), P90: us(h.ValueAtQuantile(90)),
		P99: us(h.ValueAtQuantile(99)), P999: us(h.ValueAtQuantile(99.9)),
		Max: us(h.Max()), Mean: h.Mean() / 1e3,
	}
}

// WriteJSON writes results as indented JSON: one object, or an array when
// there are several.
func WriteJSON(w io.Writer, results ...*Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(results) == 1 {
		return enc.Encode(results[0])
	}
	return enc.Encode(results)
}

// WriteTable writes results as an aligned text table, one row per result.
func WriteTable(w io.Writer, results ...*Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tmode\tconns\tdepth\trequests\tops/s\terrors\tmisses\thit%\tp50 µs\tp90 µs\tp99 µs\tp999 µs\tmax µs\t")
	for _, r := range results {
		depth := fmt.Sprint(r.Pipeline)
		mode := r.Mode
		if r.Mode == "open" {
			mode = fmt.Sprintf("open %.0f/s", r.Rate)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%.0f\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
			r.Target, mode, r.Conns, depth, r.Requests, r.OpsPerSec, r.Errors, r.Misses, 100*r.HitRatio,
			r.Latency.P50, r.Latency.P90, r.Latency.P99, r.Latency.P999, r.Latency.Max)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		var notes []string
		if r.FirstErr != "" {
			notes = append(notes, "first error: "+r.FirstErr)
		}
		if r.BadSize > 0 {
			notes = append(notes, fmt.Sprintf("%d hits returned a value of the wrong size", r.BadSize))
		}
		if r.FillsLost > 0 {
			notes = append(notes, fmt.Sprintf("%d read-through fills dropped (queue full)", r.FillsLost))
		}
		if r.SendLag != nil {
			notes = append(notes, fmt.Sprintf("sent late by p50 %.1f µs, p99 %.1f µs (the generator's share of the latency)", r.SendLag.P50, r.SendLag.P99))
		}
		if len(notes) > 0 {
			if _, err := fmt.Fprintf(w, "%s: %s\n", r.Target, strings.Join(notes, "; ")); err != nil {
				return err
			}
		}
	}
	return nil
}
