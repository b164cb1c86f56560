package locality

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/strata-cache/strata/bench/proc"
)

// The placements, in the order they run.
const (
	Static = "static"           // μ-shards pinned by hash of their name, no migrations
	Full   = "full_replication" // locality off: every region caches what it uses, writes delete elsewhere
	Strata = "strata"           // locality on, the placement service migrates μ-shards
)

// Placements lists every placement in running order.
var Placements = []string{Static, Full, Strata}

// Binaries are the programs the bench runs. Empty Memcached and Etcd are
// looked up on PATH; Strata must be set (the strata binary, run with
// serve).
type Binaries struct {
	Strata, Memcached, Etcd string
}

// Config is one run of the bench. Zero fields take the defaults named.
type Config struct {
	Binaries Binaries
	// Placements to run, from Placements (default all three).
	Placements []string
	// Duration is the simulated day of each placement (default 16s: with
	// start-up, prefill and the forward-cost burst the three placements
	// take about a minute); the prefill before it is not measured.
	Duration time.Duration
	// OneWay is the delay between regions a and b, one way; b–c gets 5ms
	// more and a–c 10ms more (default 30ms: 30, 35, 40).
	OneWay time.Duration
	// Users per region (default 50), Fields per user (default 4), bytes
	// per value (default 400).
	Users, Fields, ValueSize int
	// Rate is the requests per second of all clients together (default
	// 600); Conns the client connections per region (default 16).
	Rate  float64
	Conns int
	// ReadRatio is reads ÷ all of a user's own requests (default 0.8, 4:1);
	// Foreign the fraction of requests reading some other user (default
	// 0.02).
	ReadRatio, Foreign float64
	// FullWrites is what a write does in the other regions under full
	// replication, where every region caches everything and writes
	// invalidate everywhere:
	//   - "refill" (the default): it deletes the key there before it
	//     counts as done, and the value is then cached there again, off
	//     the write's latency, as a region whose cache holds everything
	//     re-reads what was invalidated;
	//   - "delete": it only deletes, and a region caches the key again
	//     when one of its own clients reads it — with users read from one
	//     region at a time this holds little more than one copy, so it
	//     is not every region caching everything;
	//   - "set": it stores the new value there before it counts as done.
	FullWrites string
	// MigrateAfter, MinInterval and MaxTTL are strata's policy; by default
	// scaled to the day: 2.5 %, 30 % and 30 % of Duration (MaxTTL rounded
	// to whole seconds, at least 1s; MinInterval at least MaxTTL+1s).
	MigrateAfter, MinInterval, MaxTTL time.Duration
	// CounterInterval is strata's counter_interval (default 1/80 of the
	// day, at least 50ms: 200ms for 16s). It is scaled with the policy
	// because strata ships a μ-shard used only at home every fifth
	// interval: with intervals long against the scaled half-life, the
	// owner's score goes stale and a stray foreign read can win a
	// migration. Counter traffic per interval is nearly fixed, so its
	// share of data traffic falls as the interval or the rate grows.
	CounterInterval time.Duration
	// Settle is how long after each shift of the day the placement is
	// given before steady state is measured (default 15 % of Duration).
	Settle time.Duration
	// CostRequests is how many gets of each kind (local, forwarded) the
	// forward-cost measurement after strata's day sends per round (default 40000).
	CostRequests int
	// MemcachedMB is each L2's -m (default 64).
	MemcachedMB int
	Seed        uint64
	// Log receives progress lines and the output of processes that fail
	// (default: discarded).
	Log io.Writer
}

// ConfigError is a Config value out of range (a usage error at the
// command line).
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

func bad(format string, args ...any) error { return &ConfigError{Msg: fmt.Sprintf(format, args...)} }

func (c *Config) validate() error {
	if c.Binaries.Strata == "" {
		return &proc.MissingBinaryError{Name: "strata", Package: "strata", Err: errors.New("no strata binary given")}
	}
	if _, err := os.Stat(c.Binaries.Strata); err != nil {
		return &proc.MissingBinaryError{Name: "strata", Package: "strata", Err: err}
	}
	var err error
	if c.Binaries.Memcached == "" {
		if c.Binaries.Memcached, err = proc.LookBinary("memcached", "the memcached package"); err != nil {
			return err
		}
	}
	if len(c.Placements) == 0 {
		c.Placements = Placements
	}
	for _, p := range c.Placements {
		if p != Static && p != Full && p != Strata {
			return bad("unknown placement %q (want %v)", p, Placements)
		}
		if p != Full && c.Binaries.Etcd == "" {
			if c.Binaries.Etcd, err = proc.LookBinary("etcd", "the etcd-server package"); err != nil {
				return err
			}
		}
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Users, 50)
	def(&c.Fields, 4)
	def(&c.ValueSize, 400)
	def(&c.Conns, 16)
	def(&c.MemcachedMB, 64)
	def(&c.CostRequests, 40000)
	if c.Duration == 0 {
		c.Duration = 16 * time.Second
	}
	if c.OneWay == 0 {
		c.OneWay = 30 * time.Millisecond
	}
	if c.FullWrites == "" {
		c.FullWrites = FullRefill
	}
	if c.Rate == 0 {
		c.Rate = 600
	}
	if c.ReadRatio == 0 {
		c.ReadRatio = 0.8
	}
	if c.Foreign == 0 {
		c.Foreign = 0.02
	}
	scale := func(v *time.Duration, f float64) {
		if *v == 0 {
			*v = time.Duration(float64(c.Duration) * f).Round(time.Millisecond)
		}
	}
	scale(&c.MigrateAfter, 0.025)
	scale(&c.MaxTTL, 0.3)
	// strata takes max_ttl in whole seconds (it becomes a memcached TTL).
	// memcached's clock ticks once a second, so a value may outlive its
	// TTL by up to a second: min_interval keeps that margin over max_ttl.
	c.MaxTTL = max(c.MaxTTL.Round(time.Second), time.Second)
	if c.MinInterval == 0 {
		c.MinInterval = max(time.Duration(float64(c.Duration)*0.3).Round(time.Millisecond), c.MaxTTL+time.Second)
	}
	scale(&c.Settle, 0.15)
	if c.Log == nil {
		c.Log = io.Discard
	}
	switch {
	case c.Duration < 2*time.Second:
		return bad("duration %v: at least 2s", c.Duration)
	case c.Users < 2 || c.Fields < 1 || c.ValueSize < 1 || c.Conns < 1 || c.CostRequests < 1:
		return bad("users (at least 2), fields, value size, conns and cost requests must be positive")
	case c.Rate <= 0:
		return bad("rate must be positive")
	case c.ReadRatio < 0 || c.ReadRatio > 1 || c.Foreign < 0 || c.Foreign >= 1:
		return bad("read ratio must be in [0,1] and foreign in [0,1)")
	case c.CounterInterval != 0 && (c.CounterInterval < 10*time.Millisecond || c.CounterInterval > time.Hour):
		return bad("counter interval %v: 10ms to 1h (strata's validation requires it)", c.CounterInterval)
	case c.MaxTTL%time.Second != 0:
		return bad("max ttl %v: whole seconds (strata's validation requires it)", c.MaxTTL)
	case c.MinInterval < c.MaxTTL:
		return bad("min interval %v must be at least max ttl %v (strata's validation requires it)", c.MinInterval, c.MaxTTL)
	case c.FullWrites != FullRefill && c.FullWrites != FullDelete && c.FullWrites != FullSet:
		return bad("full replication writes %q: want %s, %s or %s", c.FullWrites, FullRefill, FullDelete, FullSet)
	case c.OneWay < time.Millisecond:
		return bad("one-way delay %v: at least 1ms", c.OneWay)
	}
	return nil
}

// What a full replication write does in the other regions (FullWrites).
const (
	FullRefill = "refill"
	FullDelete = "delete"
	FullSet    = "set"
)

// regionNames are the three regions.
func (c *Config) regionNames() []string { return []string{"a", "b", "c"} }

// oneWay is the delay from region i to j.
func (c *Config) oneWay(i, j int) time.Duration {
	if i > j {
		i, j = j, i
	}
	switch {
	case i == 0 && j == 1:
		return c.OneWay
	case i == 1 && j == 2:
		return c.OneWay + 5*time.Millisecond
	}
	return c.OneWay + 10*time.Millisecond
}

// day is the workload of the run.
func (c *Config) day() Day {
	return Day{Regions: 3, Users: c.Users, Fields: c.Fields, PeakStart: 0.3, PeakEnd: 0.7,
		ReadRatio: c.ReadRatio, Foreign: c.Foreign}
}

// policy is strata's [locality] policy, as written into each region's
// file: the three keys scaled to the day, and ours scaled with
// them (strata's validation bounds: grace and half_life at least 1s, grace
// at most max_ttl). The migration cap is lifted far above the day's
// travellers so that it never holds them back.
type policy struct {
	MigrateAfter    string `json:"migrate_after"`
	MinInterval     string `json:"min_interval"`
	MaxTTL          string `json:"max_ttl"`
	HalfLife        string `json:"half_life"`
	CounterInterval string `json:"counter_interval"`
	Grace           string `json:"grace"`
	Rate            int    `json:"rate"`
	Burst           int    `json:"burst"`
}

func (c *Config) policy() policy {
	counter := c.CounterInterval
	if counter == 0 {
		counter = max(c.Duration/80, 50*time.Millisecond).Round(time.Millisecond)
	}
	grace := min(max(c.MigrateAfter, time.Second), c.MaxTTL)
	halfLife := max(c.Duration/20, time.Second).Round(time.Millisecond)
	return policy{
		MigrateAfter: c.MigrateAfter.String(), MinInterval: c.MinInterval.String(), MaxTTL: c.MaxTTL.String(),
		HalfLife: halfLife.String(), CounterInterval: counter.String(), Grace: grace.String(),
		Rate: 1000, Burst: 1000,
	}
}
