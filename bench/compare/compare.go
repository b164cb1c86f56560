package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/strata-cache/strata/bench/driver"
	"github.com/strata-cache/strata/bench/proc"
	"github.com/strata-cache/strata/bench/workload"
)

// Config describes a side-by-side comparison.
type Config struct {
	Binaries Binaries
	Workload *workload.Workload
	// Targets to measure, in order (default AllTargets).
	Targets []string
	// Duration of each measurement (default 10 s), with Conns connections
	// (default 20) at each pipeline depth in Pipelines (default 1 and 16).
	Duration  time.Duration
	Conns     int
	Pipelines []int
	// Rounds (default 1) measures every target at every depth this many
	// times, interleaved: every target once, then every target again, in
	// the reverse order (see roundOrder). Each target is started afresh
	// every round. The report keeps medians, and its ratios are medians of
	// the ratios within a round.
	Rounds int
	// MemcachedMB is each memcached's memory limit (default 1024, the size
	// of strata's default embedded L2).
	MemcachedMB int
	// Idle, when set, first measures each target doing nothing for this
	// long (after idleSettle), before any load: its CPU time and wakeups.
	Idle time.Duration
	// IdleConns, when positive, then measures each target's resident memory
	// with this many idle client connections open (see measureConns). The
	// benchmark's own file limit must allow them (ulimit -n).
	IdleConns int
	// OpenLoad, when set, then drives every target open loop at each of
	// these fractions of the capacity: the ops/s of the slowest target at
	// the first depth of Pipelines. OpenRounds (default 3) interleaved
	// rounds; the report keeps each figure's median.
	OpenLoad   []float64
	OpenRounds int
	// Log receives one line per step (starting, measuring); Progress is
	// handed to the driver. Either may be nil.
	Log      io.Writer
	Progress io.Writer
}

// Row is one target measured at one pipeline depth, over Config.Rounds
// rounds (see summarizeRounds for which figure is which round's).
type Row struct {
	Target   string `json:"target"`
	Pipeline int    `json:"pipeline"`
	// Rounds counts the rounds that produced a result.
	Rounds int            `json:"rounds"`
	Result *driver.Result `json:"result,omitempty"`
	// ProxyCPU is the CPU time (user+system) of the process under test
	// during the measurement: memcached itself, nutcracker, or strata.
	ProxyCPUSeconds float64 `json:"proxy_cpu_seconds"`
	// BackendCPU is the CPU time of the memcached servers behind a proxy.
	BackendCPUSeconds float64 `json:"backend_cpu_seconds"`
	// CPUMeasured is false when the CPU time could not be read (a process
	// died during the run).
	CPUMeasured bool `json:"cpu_measured"`
	// Per million requests answered.
	ProxyCPUPerM   float64 `json:"proxy_cpu_s_per_million"`
	BackendCPUPerM float64 `json:"backend_cpu_s_per_million"`
	// Each round's ops/s and proxy CPU per million requests (0 where the
	// CPU time could not be read), in the order the rounds ran, so the
	// spread behind a median is visible.
	RoundOps     []float64 `json:"round_ops_per_sec,omitempty"`
	RoundCPUPerM []float64 `json:"round_proxy_cpu_s_per_million,omitempty"`
	// Ratios of ops/s to direct memcached and to twemproxy at the same
	// depth; 0 when that yardstick was not measured.
	VsMemcached float64 `json:"vs_memcached"`
	VsTwemproxy float64 `json:"vs_twemproxy"`
	// Ratios of the CPU time the process under test spent per request to
	// that of memcached, twemproxy and strata-single at the same depth
	// (below 1: cheaper); 0 when that yardstick was not measured.
	CPUVsMemcached float64 `json:"cpu_vs_memcached"`
	CPUVsTwemproxy float64 `json:"cpu_vs_twemproxy"`
	CPUVsSingle    float64 `json:"cpu_vs_strata_single"`
	Err            string  `json:"error,omitempty"`
}

// Report is the whole comparison.
type Report struct {
	Profile   string     `json:"profile"`
	Conns     int        `json:"conns"`
	Duration  float64    `json:"seconds_each"`
	CPUs      int        `json:"cpus"`
	Date      time.Time  `json:"date"`
	Rows      []Row      `json:"rows"`
	Idle      []IdleRow  `json:"idle,omitempty"`
	IdleConns []ConnsRow `json:"idle_conns,omitempty"`
	// Capacity is the rate OpenLoad's fractions refer to.
	Capacity float64   `json:"open_capacity,omitempty"`
	Open     []OpenRow `json:"open,omitempty"`
}

// IdleRow is one target measured idle (Config.Idle): the process under
// test only, not its backends.
type IdleRow struct {
	Target       string  `json:"target"`
	Seconds      float64 `json:"seconds"`
	CPUMsPerSec  float64 `json:"cpu_ms_per_s"`
	SlicesPerSec float64 `json:"wakeups_per_s"` // times a thread went on a CPU
	Err          string  `json:"error,omitempty"`
}

// ErrTargetFailed is returned (after the report is complete) when some
// target could not be started or measured; its row says why.
var ErrTargetFailed = errors.New("some targets failed")

func (c *Config) validate() error {
	if c.Workload == nil {
		return errors.New("compare: no workload")
	}
	if len(c.Targets) == 0 {
		c.Targets = AllTargets
	}
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if c.Conns <= 0 {
		c.Conns = 20
	}
	if len(c.Pipelines) == 0 {
		c.Pipelines = []int{1, 16}
	}
	if c.MemcachedMB <= 0 {
		c.MemcachedMB = 1024
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	for _, f := range c.OpenLoad {
		if !(f > 0 && f <= 2) {
			return fmt.Errorf("compare: open-loop fraction %v: want above 0, at most 2", f)
		}
	}
	if c.Rounds <= 0 {
		c.Rounds = 1
	}
	if c.OpenRounds <= 0 {
		c.OpenRounds = 3
	}
	return c.Binaries.resolve(c.Targets)
}

// Run measures each target in turn: start its processes on free loopback
// ports, drive the workload at each depth, stop them; and all of that
// Config.Rounds times. Only one target runs at a time, so targets do not
// compete for the CPUs. Every process started is stopped before Run
// returns, on success, error or cancellation. A target that fails is
// recorded in its row and the others still run; Run then returns the
// report with ErrTargetFailed. A missing binary fails before anything
// starts.
func Run(ctx context.Context, cfg Config, now time.Time) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "strata-bench-compare-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	l := &launcher{bins: cfg.Binaries, dir: dir, memcachedMB: cfg.MemcachedMB, maxConns: cfg.IdleConns, readyWithin: 10 * time.Second}
	defer l.stopAll()

	rep := &Report{
		Profile: cfg.Workload.Profile().Name, Conns: cfg.Conns, Duration: cfg.Duration.Seconds(),
		CPUs: numCPU(), Date: now,
	}
	failed := false
	samples := map[string]map[int][]Row{}
	for _, target := range cfg.Targets {
		samples[target] = map[int][]Row{}
	}
	for round := 0; round < cfg.Rounds && ctx.Err() == nil; round++ {
		for _, target := range roundOrder(cfg.Targets, round) {
			if ctx.Err() != nil {
				break
			}
			failed = measureRound(ctx, &cfg, l, rep, round, target, samples[target]) || failed
		}
	}
	for _, target := range cfg.Targets {
		for _, d := range cfg.Pipelines {
			if len(samples[target][d]) > 0 { // none: interrupted before it
				rep.Rows = append(rep.Rows, summarizeRounds(target, d, samples[target][d]))
			}
		}
	}
	rep.fillRatios(samples)
	if len(cfg.OpenLoad) > 0 && ctx.Err() == nil {
		rep.Capacity = rep.capacity(cfg.Pipelines[0])
		if rep.Capacity == 0 {
			return rep, fmt.Errorf("compare: no target measured at depth %d, so no capacity for the open loop", cfg.Pipelines[0])
		}
		var openFailed bool
		rep.Open, openFailed = runOpen(ctx, &cfg, l, rep.Capacity)
		failed = failed || openFailed
	}
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	if failed {
		return rep, ErrTargetFailed
	}
	return rep, nil
}

// measureRound starts target, measures it at every depth and stops it,
// appending one sample per depth to bydepth; in round 0 it first takes the
// idle measurements Config asks for. It reports whether anything failed.
func measureRound(ctx context.Context, cfg *Config, l *launcher, rep *Report, round int, target string, bydepth map[int][]Row) bool {
	failed := false
	prefix := ""
	if cfg.Rounds > 1 {
		prefix = fmt.Sprintf("round %d: ", round+1)
	}
	fmt.Fprintf(cfg.Log, "%sstarting %s\n", prefix, target)
	topo, err := l.setup(ctx, target)
	if err != nil {
		for _, d := range cfg.Pipelines {
			bydepth[d] = append(bydepth[d], Row{Target: target, Pipeline: d, Err: err.Error()})
		}
		fmt.Fprintf(cfg.Log, "  %v\n", err)
		return true
	}
	defer topo.stop()
	if round == 0 && cfg.Idle > 0 {
		fmt.Fprintf(cfg.Log, "measuring %s idle for %v\n", target, cfg.Idle)
		row := measureIdle(ctx, cfg.Idle, topo)
		failed = failed || row.Err != ""
		rep.Idle = append(rep.Idle, row)
	}
	if round == 0 && cfg.IdleConns > 0 {
		fmt.Fprintf(cfg.Log, "measuring %s with %d idle connections\n", target, cfg.IdleConns)
		row := measureConns(ctx, cfg.IdleConns, idleSettle, topo)
		failed = failed || row.Err != ""
		rep.IdleConns = append(rep.IdleConns, row)
	}
	for _, depth := range cfg.Pipelines {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(cfg.Log, "%smeasuring %s at pipeline %d for %v\n", prefix, target, depth, cfg.Duration)
		row := measure(ctx, cfg, topo, depth)
		if row.Err != "" {
			failed = true
			fmt.Fprintf(cfg.Log, "  %s\n", row.Err)
		}
		bydepth[depth] = append(bydepth[depth], row)
	}
	return failed
}

// measure runs the driver once against a running target, reading the CPU
// time of its processes just before the measured phase and just after.
func measure(ctx context.Context, cfg *Config, t *topology, depth int) Row {
	row := Row{Target: t.name, Pipeline: depth}
	var proxy0, back0 time.Duration
	var snapErr error
	snapshot := func() (time.Duration, time.Duration) {
		p, err := cpuTime(t.proxy.Pid())
		if err != nil && snapErr == nil {
			snapErr = err
		}
		var b time.Duration
		for _, be := range t.backends {
			v, err := cpuTime(be.Pid())
			if err != nil && snapErr == nil {
				snapErr = err
			}
			b += v
		}
		return p, b
	}
	res, err := driver.Run(ctx, driver.Config{
		Target: t.addr, Workload: cfg.Workload, Conns: cfg.Conns, Pipeline: depth,
		Duration: cfg.Duration, Progress: cfg.Progress,
		Started: func() { proxy0, back0 = snapshot() },
	})
	if err != nil {
		row.Err = err.Error()
		return row
	}
	proxy1, back1 := snapshot()
	row.Result = res
	select {
	case <-t.proxy.Exited():
		// A process that died mid-run has no CPU time left to read.
		row.Err = t.proxy.DescribeExit().Error()
		fmt.Fprintf(cfg.Log, "--- output of %s ---\n%s\n--- end of output ---\n", t.name, t.proxy.Output())
		return row
	default:
	}
	if snapErr != nil {
		row.Err = snapErr.Error()
		return row
	}
	row.CPUMeasured = true
	row.ProxyCPUSeconds = (proxy1 - proxy0).Seconds()
	row.BackendCPUSeconds = (back1 - back0).Seconds()
	if res.Requests > 0 {
		row.ProxyCPUPerM = row.ProxyCPUSeconds / float64(res.Requests) * 1e6
		row.BackendCPUPerM = row.BackendCPUSeconds / float64(res.Requests) * 1e6
	}
	if res.Errors > 0 {
		row.Err = fmt.Sprintf("%d errors (first: %s)", res.Errors, res.FirstErr)
	}
	return row
}

// idleSettle is how long a target is left alone before its idle
// measurement, so the readiness check's request is behind it.
const idleSettle = 2 * time.Second

// measureIdle reads the scheduler's counts of the process under test
// before and after it has been left alone for d.
func measureIdle(ctx context.Context, d time.Duration, t *topology) IdleRow {
	row := IdleRow{Target: t.name, Seconds: d.Seconds()}
	wait := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			row.Err = ctx.Err().Error()
			return false
		case <-time.After(d):
			return true
		}
	}
	if !wait(idleSettle) {
		return row
	}
	a, err := proc.Sched(t.proxy.Pid())
	if err == nil && wait(d) {
		var b proc.SchedSample
		if b, err = proc.Sched(t.proxy.Pid()); err == nil {
			row.CPUMsPerSec = float64(b.CPU-a.CPU) / float64(time.Millisecond) / d.Seconds()
			row.SlicesPerSec = float64(b.Slices-a.Slices) / d.Seconds()
		}
	}
	if err != nil {
		row.Err = err.Error()
	}
	return row
}
