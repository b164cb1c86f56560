package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/strata-cache/strata/bench/locality"
)

// benchLocality is `strata bench locality`: three regions of strata
// processes on this machine compared under static placement, full
// replication and strata's own placement (bench/locality).
func benchLocality(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("strata bench locality", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 16*time.Second, "the simulated day of each placement (three run, one after the other)")
	placements := fs.String("placements", "static,full_replication,strata", "comma-separated placements to run")
	users := fs.Int("users", 50, "users per region (each a μ-shard)")
	fields := fs.Int("fields", 4, "keys per user")
	valueSize := fs.Int("value-size", 400, "bytes per value")
	rate := fs.Float64("rate", 600, "requests per second of all clients together")
	conns := fs.Int("conns", 16, "client connections per region")
	delay := fs.Duration("delay", 30*time.Millisecond, "one-way delay a–b (b–c gets 5ms more, a–c 10ms more)")
	readRatio := fs.Float64("read-ratio", 0.8, "reads ÷ all requests of a user's own clients (0.8 is 4:1)")
	foreign := fs.Float64("foreign", 0.02, "fraction of requests that read some other user's data")
	migrateAfter := fs.Duration("migrate-after", 0, "strata's migrate_after (default 2.5 % of --duration)")
	minInterval := fs.Duration("min-interval", 0, "strata's min_interval (default 30 % of --duration)")
	maxTTL := fs.Duration("max-ttl", 0, "strata's max_ttl (default 30 % of --duration)")
	counterInterval := fs.Duration("counter-interval", 0, "strata's counter_interval (default 1/80 of --duration, at least 50ms)")
	settle := fs.Duration("settle", 0, "time after each shift of the day before steady state is measured (default 15 % of --duration)")
	costRequests := fs.Int("cost-requests", 40000, "gets of each kind per round (three) of the forwarded-versus-local CPU measurement after strata's day, both kinds sent at the same pace")
	fullWrites := fs.String("full-replication-writes", "refill", "full replication, what a write does in the other regions: refill (delete, then cache the new value again), delete (only delete) or set")
	seed := fs.Uint64("seed", 1, "workload seed")
	strataBin := fs.String("strata", "", "the strata binary the regions run (default: this one)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	simulate := fs.Bool("simulate", false, "run no process: drive the placement leader and the regions' counters in memory, in virtual time (--mushards, --days, --sim-interval)")
	mushards := fs.Int("mushards", 1_000_000, "with --simulate: μ-shards")
	days := fs.Int("days", 7, "with --simulate: simulated days")
	simInterval := fs.Duration("sim-interval", 15*time.Minute, "with --simulate: the counter interval, virtual")
	cpuProfile := fs.String("cpuprofile", "", "write this process's CPU profile to the file (with --simulate: the leader's and the counters' code)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	if *simulate {
		return simulateLocality(ctx, locality.SimConfig{MuShards: *mushards, Days: *days, Interval: *simInterval, Seed: *seed, CPU: processCPU, Log: stderr}, *asJSON, stdout)
	}
	bin := *strataBin
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("locate the strata binary: %w", err)
		}
		bin = exe
	}
	cfg := locality.Config{
		Binaries:   locality.Binaries{Strata: bin},
		Placements: splitList(*placements),
		Duration:   *duration, OneWay: *delay,
		Users: *users, Fields: *fields, ValueSize: *valueSize, Rate: *rate, Conns: *conns,
		ReadRatio: *readRatio, Foreign: *foreign,
		MigrateAfter: *migrateAfter, MinInterval: *minInterval, MaxTTL: *maxTTL, Settle: *settle,
		CounterInterval: *counterInterval, FullWrites: *fullWrites,
		CostRequests: *costRequests, Seed: *seed, Log: stderr,
	}
	rep, err := locality.Run(ctx, cfg)
	if err != nil {
		var cfgErr *locality.ConfigError
		if errors.As(err, &cfgErr) {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		if ctx.Err() != nil {
			return errors.New("interrupted")
		}
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

// simulateLocality is `strata bench locality --simulate`.
func simulateLocality(ctx context.Context, cfg locality.SimConfig, asJSON bool, stdout io.Writer) error {
	rep, err := locality.Simulate(ctx, cfg)
	if err != nil {
		var cfgErr *locality.ConfigError
		if errors.As(err, &cfgErr) {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		return err
	}
	if asJSON {
		return rep.WriteJSON(stdout)
	}
	return rep.WriteTable(stdout)
}

// startCPUProfile profiles this process into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}
