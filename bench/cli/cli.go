package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/bench/allocator"
	"github.com/strata-cache/strata/bench/compare"
	"github.com/strata-cache/strata/bench/driver"
	"github.com/strata-cache/strata/bench/longtail"
	"github.com/strata-cache/strata/bench/workload"
	"github.com/strata-cache/strata/placement"
)

// Summary is the verb's line in the binary's command list.
const Summary = "load-test a memcached endpoint, compare with memcached and twemproxy, run the long-tail, allocator and locality experiments"

// ErrUsage marks an error caused by bad command-line arguments; the binary
// exits 2 on it. Its text is "usage", the prefix of every such message.
var ErrUsage = errors.New("usage")

// SizeParser reads a size such as "64MiB" into bytes. The binary passes
// its configuration file's parser, so --memory takes the file's syntax.
type SizeParser func(string) (int64, error)

const benchUsage = `usage: strata bench <verb> [flags]

verbs:
  run        drive a workload at any memcached endpoint
  compare    memcached, twemproxy and strata side by side on loopback
  longtail   L1-only clusters versus thin L1s over a shared L2, same memory
  allocator  the shard allocator's stress test from a random start, or
             (--compare) static rendezvous versus load-aware placement
  locality   three regions on loopback with injected WAN delay: static
             placement, full replication and strata's μ-shard placement
  profiles   list the built-in workload profiles

Run 'strata bench <verb> -h' for the flags of a verb.
`

// Run is `strata bench ARGS`: it parses the verb and its flags, runs the
// experiment until it ends or ctx is done, and prints the result on
// stdout; logs and progress go to stderr. Bad arguments return an error
// that wraps ErrUsage; flag.ErrHelp after -h.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, parseSize SizeParser) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, benchUsage)
		return fmt.Errorf("%w: missing verb", ErrUsage)
	}
	switch args[0] {
	case "run":
		return benchRun(ctx, args[1:], stdout, stderr)
	case "compare":
		return benchCompare(ctx, args[1:], stdout, stderr)
	case "longtail":
		return benchLongtail(ctx, args[1:], stdout, stderr, parseSize)
	case "allocator":
		return benchAllocator(args[1:], stdout, stderr)
	case "locality":
		return benchLocality(ctx, args[1:], stdout, stderr)
	case "profiles":
		for _, n := range workload.BuiltinNames() {
			p, _ := workload.Builtin(n)
			fmt.Fprintf(stdout, "%-18s %s\n", n, p.Description)
		}
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, benchUsage)
		return nil
	}
	fmt.Fprint(stderr, benchUsage)
	return fmt.Errorf("%w: unknown verb %q", ErrUsage, args[0])
}

// parseFlags parses a verb's flags and rejects stray arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	return nil
}

// loadWorkload resolves --profile and applies --seed.
func loadWorkload(name string, seed uint64, seedSet bool, adjust func(*workload.Profile)) (*workload.Workload, error) {
	p, err := workload.Lookup(name)
	if err != nil {
		return nil, err
	}
	if seedSet {
		p.Seed = seed
	}
	if adjust != nil {
		adjust(p)
	}
	return workload.New(p)
}

// progressWriter decides where the progress line goes: stderr when it is a
// terminal, or whenever --progress asks for it.
func progressWriter(stderr io.Writer, force bool) io.Writer {
	if force {
		return stderr
	}
	if f, ok := stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return stderr
		}
	}
	return nil
}

func benchRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("strata bench run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "", "memcached endpoint HOST:PORT (required)")
	profile := fs.String("profile", "getset-90-10", "built-in profile name or TOML file")
	duration := fs.Duration("duration", 10*time.Second, "how long to run")
	requests := fs.Int64("requests", 0, "stop after this many requests (0: duration only)")
	conns := fs.Int("conns", 20, "TCP connections")
	pipeline := fs.Int("pipeline", 1, "requests in flight per connection (closed loop); largest batch (open loop)")
	rate := fs.Float64("rate", 0, "open loop: target requests per second over all connections (0: closed loop)")
	seed := fs.Uint64("seed", 0, "workload seed (default: the profile's)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	progress := fs.Bool("progress", false, "print a progress line on stderr even when it is not a terminal")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *target == "" {
		return fmt.Errorf("%w: --target HOST:PORT is required", ErrUsage)
	}
	w, err := loadWorkload(*profile, *seed, flagSet(fs, "seed"), nil)
	if err != nil {
		return err
	}
	res, err := driver.Run(ctx, driver.Config{
		Target: *target, Workload: w, Conns: *conns, Pipeline: *pipeline, Rate: *rate,
		Duration: *duration, Requests: *requests, Progress: progressWriter(stderr, *progress),
	})
	if err != nil {
		return err
	}
	if *asJSON {
		err = driver.WriteJSON(stdout, res)
	} else {
		err = driver.WriteTable(stdout, res)
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return nil
}

func benchCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("strata bench compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "getset-90-10", "built-in profile name or TOML file")
	duration := fs.Duration("duration", 10*time.Second, "measurement time per target and depth")
	conns := fs.Int("conns", 20, "TCP connections")
	pipelines := fs.String("pipeline", "1,16", "comma-separated pipeline depths")
	targets := fs.String("targets", strings.Join(compare.AllTargets, ","), "comma-separated targets to measure")
	memMB := fs.Int("memcached-mb", 1024, "memory limit of each memcached (-m)")
	idle := fs.Duration("idle", 0, "first measure each target's CPU and wakeups with no clients for this long (0: skip)")
	idleConns := fs.Int("idle-conns", 0, "then measure each target's resident memory with this many idle connections (0: skip)")
	open := fs.String("open", "", "then drive each target open loop at these percentages of the slowest target's ops/s at the first depth, e.g. 20,50,80")
	rounds := fs.Int("rounds", 3, "rounds of every measurement, closed and open loop, interleaved across targets; the report keeps medians")
	seed := fs.Uint64("seed", 0, "workload seed (default: the profile's)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	progress := fs.Bool("progress", false, "print a progress line on stderr even when it is not a terminal")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	depths, err := parseInts(*pipelines)
	if err != nil {
		return fmt.Errorf("%w: --pipeline: %v", ErrUsage, err)
	}
	if *rounds < 1 {
		return fmt.Errorf("%w: --rounds %d: want at least 1", ErrUsage, *rounds)
	}
	var openLoad []float64
	if *open != "" {
		pcts, err := parseInts(*open)
		if err != nil {
			return fmt.Errorf("%w: --open: %v", ErrUsage, err)
		}
		for _, p := range pcts {
			openLoad = append(openLoad, float64(p)/100)
		}
	}
	w, err := loadWorkload(*profile, *seed, flagSet(fs, "seed"), nil)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("locate the strata binary: %w", err)
	}
	rep, runErr := compare.Run(ctx, compare.Config{
		Binaries: compare.Binaries{Strata: exe}, Workload: w,
		Targets: splitList(*targets), Duration: *duration, Conns: *conns, Pipelines: depths,
		MemcachedMB: *memMB, Idle: *idle, IdleConns: *idleConns, Rounds: *rounds, OpenLoad: openLoad, OpenRounds: *rounds, Log: stderr, Progress: progressWriter(stderr, *progress),
	}, time.Now())
	if rep != nil {
		var err error
		if *asJSON {
			err = rep.WriteJSON(stdout)
		} else {
			err = rep.WriteTable(stdout)
		}
		if err != nil {
			return err
		}
	}
	if runErr != nil && ctx.Err() != nil {
		return errors.New("interrupted; the results above are partial")
	}
	return runErr
}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, part := range splitList(s) {
		v, err := strconv.Atoi(part)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", part)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

func benchLongtail(ctx context.Context, args []string, stdout, stderr io.Writer, parseSize SizeParser) error {
	fs := flag.NewFlagSet("strata bench longtail", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "multicluster-zipf", "built-in profile name or TOML file (multi-cluster)")
	clusters := fs.Int("clusters", 4, "frontend clusters (overrides the profile)")
	memory := fs.String("memory", "", "total memory of either layout, e.g. 64MiB (default 16MiB per cluster)")
	thresholds := fs.String("thresholds", "1,8,16,32,64,128", "comma-separated promotion thresholds N")
	requests := fs.Int64("requests", 0, "requests per layout (default 2000000 unless --duration is given)")
	duration := fs.Duration("duration", 0, "time bound per layout")
	warmup := fs.Float64("warmup", 0.5, "fraction of each run that warms the caches and is not counted")
	seed := fs.Uint64("seed", 0, "workload and promotion seed (default: the profile's)")
	htmlFile := fs.String("html", "", "also write a self-contained HTML page with charts to this file")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *clusters < 1 {
		return fmt.Errorf("%w: --clusters must be at least 1", ErrUsage)
	}
	ns, err := parseInts(*thresholds)
	if err != nil {
		return fmt.Errorf("%w: --thresholds: %v", ErrUsage, err)
	}
	var total int64
	if *memory != "" {
		size, err := parseSize(*memory) // the configuration file's size syntax
		if err != nil || size <= 0 {
			if err == nil {
				err = fmt.Errorf("size %q must be positive", *memory)
			}
			return fmt.Errorf("%w: --memory: %v", ErrUsage, err)
		}
		total = size
	}
	w, err := loadWorkload(*profile, *seed, flagSet(fs, "seed"), func(p *workload.Profile) { p.Clusters = *clusters })
	if err != nil {
		return err
	}
	cfg := longtail.Config{
		Workload: w, TotalMemory: total, Requests: *requests, Duration: *duration,
		WarmupFraction: *warmup, Seed: w.Profile().Seed, Log: stderr,
	}
	if *warmup == 0 {
		cfg.WarmupFraction = 1e-9 // zero means the default; this counts (nearly) everything
	}
	for _, n := range ns {
		cfg.Thresholds = append(cfg.Thresholds, uint32(n))
	}
	rep, err := longtail.Run(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return errors.New("interrupted")
		}
		return err
	}
	rep.Date = time.Now()
	if *htmlFile != "" {
		if err := writeFileWith(*htmlFile, rep.WriteHTML); err != nil {
			return err
		}
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

// writeFileWith creates path and fills it with write, reporting either
// step's error.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func benchAllocator(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("strata bench allocator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shards := fs.Int("shards", 75000, "shards (--compare: default 4096)")
	servers := fs.Int("servers", 1000, "servers (--compare: default 16)")
	replicas := fs.Int("replicas", 1, "replicas per shard (stress test only)")
	seed := fs.Uint64("seed", 1, "seed of the loads, the random start and the search")
	spread := fs.Float64("capacity-spread", 0.2, "how far byte capacities vary between servers (fraction; stress test only)")
	imbalance := fs.Float64("imbalance", 0.10, "allowed excess over the mean utilisation (fraction)")
	steps := fs.Int64("steps", 0, "step budget of the search (0: the allocator's default)")
	fail := fs.Int("fail", 0, "after the solve, kill this many servers and time emergency mode (stress test only)")
	cmp := fs.Bool("compare", false, "static rendezvous versus load-aware (at --imbalance and at 2 %) on the same skewed loads")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	opts := placement.Options{Imbalance: *imbalance, MaxSteps: *steps}
	spec := allocator.Spec{Shards: *shards, Servers: *servers, Seed: *seed, Replicas: *replicas, CapacitySpread: *spread, Fail: *fail}
	if *cmp {
		if !flagSet(fs, "shards") {
			spec.Shards = 4096
		}
		if !flagSet(fs, "servers") {
			spec.Servers = 16
		}
		c, err := allocator.Compare(spec, opts, *imbalance, 0.02)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		if *asJSON {
			return c.WriteJSON(stdout)
		}
		return c.WriteTable(stdout)
	}
	res, err := allocator.RunStress(spec, opts, allocator.Clock{Now: time.Now, CPU: processCPU})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if *asJSON {
		return res.WriteJSON(stdout)
	}
	return res.WriteTable(stdout)
}
