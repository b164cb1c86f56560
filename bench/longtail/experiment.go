package longtail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/strata-cache/strata/bench/workload"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/layered"
)

// Config describes the experiment.
type Config struct {
	// Workload is the multi-cluster traffic; its profile's cluster count is
	// the number of frontend clusters.
	Workload *workload.Workload
	// TotalMemory is the memory both layouts get, in bytes, as the embedded
	// store counts it (key + value + per-item overhead). Default 16 MiB per
	// cluster.
	TotalMemory int64
	// ThinDivisor sizes the thin L1: each cluster's L1 in the layered
	// layout is 1/ThinDivisor of its L1-only size (default 8); L2 gets the
	// rest of TotalMemory.
	ThinDivisor int
	// Thresholds are the promotion thresholds N tried (default 1, 8, 16, 32,
	// 64, 128).
	Thresholds []uint32
	// Requests per layout (default 2 million, spread round-robin over the
	// clusters); Duration, if set, also bounds each layout's run. The first
	// WarmupFraction (default 0.5) of the requests — of the duration, when
	// only a duration is given — fills the caches and is not counted.
	Requests       int64
	Duration       time.Duration
	WarmupFraction float64
	// Seed drives the promotion coin of each cluster (the workload has its
	// own seed).
	Seed uint64
	// Log receives a line as each layout starts; may be nil.
	Log io.Writer
	// Now is the clock the Duration bound reads (default time.Now). The
	// caches themselves run on a frozen clock, so no item expires by
	// wall-clock time and results depend only on the seeds.
	Now func() time.Time
}

// DefaultThresholds are the paper's candidate values of N.
var DefaultThresholds = []uint32{1, 8, 16, 32, 64, 128}

func (c *Config) validate() error {
	if c.Workload == nil {
		return errors.New("longtail: no workload")
	}
	clusters := int64(c.Workload.Clusters())
	if c.TotalMemory == 0 {
		c.TotalMemory = clusters * 16 << 20
	}
	if c.ThinDivisor == 0 {
		c.ThinDivisor = 8
	}
	if len(c.Thresholds) == 0 {
		c.Thresholds = DefaultThresholds
	}
	if c.Requests == 0 && c.Duration == 0 {
		c.Requests = 2_000_000
	}
	if c.WarmupFraction == 0 {
		c.WarmupFraction = 0.5
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	switch {
	case c.TotalMemory < 0 || c.ThinDivisor < 1 || c.Requests < 0 || c.Duration < 0:
		return errors.New("longtail: negative or zero size")
	case !(c.WarmupFraction >= 0 && c.WarmupFraction < 1):
		return fmt.Errorf("longtail: warm-up fraction %v: want [0, 1)", c.WarmupFraction)
	}
	for _, n := range c.Thresholds {
		if n == 0 {
			return errors.New("longtail: threshold 0")
		}
	}
	return nil
}

// frozenNow is the caches' clock: every item's TTL is measured from it and it
// never advances.
func frozenNow() int64 { return 1_700_000_000 }

// layout is one cache arrangement under test: per cluster, the tier its
// clients use and the L1 store inside it; and the shared L2, if any.
type layout struct {
	name      string
	threshold uint32 // 0 for L1-only
	front     []tiers.Tier
	l1        []*embedded.Store
	l2        *embedded.Store
	l1Size    int64
	l2Size    int64
	layers    []*layered.Tier
}

func (c *Config) storeConfig(size int64) embedded.Config {
	return embedded.Config{MaxBytes: size, MaxItemSize: maxItemSize(c.Workload), Now: frozenNow}
}

// l1Only gives each cluster its own store of TotalMemory/C bytes.
func (c *Config) l1Only() (*layout, error) {
	n := c.Workload.Clusters()
	l := &layout{name: "L1 only", l1Size: c.TotalMemory / int64(n)}
	for i := 0; i < n; i++ {
		s, err := embedded.New(c.storeConfig(l.l1Size))
		if err != nil {
			return nil, fmt.Errorf("L1 of %d bytes: %w", l.l1Size, err)
		}
		l.l1 = append(l.l1, s)
		l.front = append(l.front, s)
	}
	return l, nil
}

// thinL1 gives each cluster an L1 of 1/ThinDivisor its L1-only size, layered
// with threshold N over one L2 that holds the rest of the memory.
func (c *Config) thinL1(threshold uint32) (*layout, error) {
	n := c.Workload.Clusters()
	l := &layout{name: fmt.Sprintf("L1/L2 N=%d", threshold), threshold: threshold}
	l.l1Size = c.TotalMemory / int64(n) / int64(c.ThinDivisor)
	l.l2Size = c.TotalMemory - int64(n)*l.l1Size
	var err error
	if l.l2, err = embedded.New(c.storeConfig(l.l2Size)); err != nil {
		return nil, fmt.Errorf("L2 of %d bytes: %w", l.l2Size, err)
	}
	for i := 0; i < n; i++ {
		s, err := embedded.New(c.storeConfig(l.l1Size))
		if err != nil {
			return nil, fmt.Errorf("thin L1 of %d bytes: %w", l.l1Size, err)
		}
		coin := rand.New(rand.NewPCG(c.Seed, uint64(threshold)<<16|uint64(i)))
		lt, err := layered.New(layered.Config{
			Threshold: threshold,
			// The longest cap the layering allows: promoted copies then
			// live as long as the LRU lets them, as in the paper's L1.
			L1MaxTTL: 30 * 24 * time.Hour,
			Rand:     coin.Uint64,
		}, s, l.l2, inline{})
		if err != nil {
			return nil, err
		}
		l.l1 = append(l.l1, s)
		l.layers = append(l.layers, lt)
		l.front = append(l.front, lt)
	}
	return l, nil
}

// inline is the layering's executor here: the simulation drives every
// tier from one goroutine, so a delayed write resumes at once.
type inline struct{}

func (inline) Run(_ int, fn func()) { fn() }

// maxItemSize is the item size limit the stores need for the workload's
// largest value, rounded up to a KiB; smaller than memcached's 1 MiB so that
// a thin L1 can be split into shards.
func maxItemSize(w *workload.Workload) int {
	largest := 0
	for f := 0; f < w.Families(); f++ {
		largest = max(largest, w.Family(f).ValueSize.Largest())
	}
	largest = min(largest, workload.MaxValueSize) + workload.MaxKeyLen + 64
	return max(1024, (largest+1023)/1024*1024)
}

// Run measures the L1-only layout and the layered layout at each threshold,
// one after another, each from empty caches with the same request stream.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rep := &Report{
		Profile: cfg.Workload.Profile().Name, Clusters: cfg.Workload.Clusters(),
		TotalMemory: cfg.TotalMemory, ThinDivisor: cfg.ThinDivisor,
		Overlap: cfg.Workload.Profile().Overlap, WarmupFraction: cfg.WarmupFraction,
	}
	if f := cfg.Workload.Family(0); f != nil {
		rep.Alpha = f.Alpha
	}
	builds := []func() (*layout, error){cfg.l1Only}
	for _, n := range cfg.Thresholds {
		builds = append(builds, func() (*layout, error) { return cfg.thinL1(n) })
	}
	for _, build := range builds {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		l, err := build()
		if err != nil {
			return nil, err
		}
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "running %s\n", l.name)
		}
		out, err := simulate(ctx, &cfg, l)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.name, err)
		}
		rep.Outcomes = append(rep.Outcomes, *out)
	}
	return rep, nil
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
