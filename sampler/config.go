package sampler

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/strata-cache/strata/sampler/family"
	"github.com/strata-cache/strata/sampler/report"
)

// Defaults. The ring and key buffers bound the sampler's memory: a ring
// slot holds a record and a copy of its key, about 300 bytes, so the
// default ring takes 65536 × 300 B ≈ 20 MiB of address space, committed
// only as far as the ring has ever filled.
const (
	// DefaultRate samples one key in a million, the rate of the long-tail
	// study: cheap enough to leave on, and with millions of keys per
	// family still thousands of sampled keys.
	DefaultRate uint64 = 1_000_000
	// DefaultSeed is the sampling hash seed ("strataS1" in ASCII). It must
	// differ from the router's seed so sampled keys are not concentrated
	// on a few shards.
	DefaultSeed uint64 = 0x7374726174615331
	// DefaultRingSize is the number of records buffered between the event
	// loops and the drainer.
	DefaultRingSize = 65536
	// DefaultMaxFileBytes is the uncompressed size at which a sample log
	// file is rotated.
	DefaultMaxFileBytes int64 = 64 << 20
	// DefaultMaxFileAge is the age at which a sample log file is rotated.
	DefaultMaxFileAge = time.Hour
	// DefaultWindow is the span of the live aggregates: an hour, the
	// shortest of the study's working-set windows.
	DefaultWindow = time.Hour
	// DefaultMaxLiveRecords bounds the records kept for the live report
	// (about 150 bytes each plus the key).
	DefaultMaxLiveRecords = 1 << 17
	// DefaultDrainInterval is how often the drainer empties the ring when
	// no producer woke it; it bounds how stale the log and live report are.
	DefaultDrainInterval = 50 * time.Millisecond
	// DefaultCluster and DefaultRegion name a strata that was not told.
	DefaultCluster = "default"
	DefaultRegion  = "default"
)

// FamilyRule maps keys matching a regular expression to a family; see
// family.Rule. Rules apply in order, before the default normalisation.
type FamilyRule = family.Rule

// Config configures a Sampler. The zero value of every field but Rate means
// its default; Rate 0 disables sampling (Sampled is always false).
// DefaultConfig returns a Config with the defaults filled in.
type Config struct {
	// Rate: a key is sampled iff XXH64(key, Seed) mod Rate == 0, so about
	// one key in Rate is sampled, and every access to it is recorded.
	Rate uint64
	// Seed of the sampling hash; 0 means DefaultSeed.
	Seed uint64
	// RingSize is the capacity of the record ring; a power of two.
	RingSize int
	// Dir is the sample log directory; "" writes no log.
	Dir string
	// MaxFileBytes and MaxFileAge rotate log files (uncompressed bytes).
	MaxFileBytes int64
	MaxFileAge   time.Duration
	// Gzip compresses log files (.jsonl.gz).
	Gzip bool
	// Cluster and Region are written into every record.
	Cluster, Region string
	// Families are rules applied before the default normalisation.
	Families []FamilyRule
	// Window is the span of the live aggregates Live reports.
	Window time.Duration
	// MaxLiveRecords bounds the records held for Live; the oldest go first.
	MaxLiveRecords int
	// Budget is the L1 budget the live report recommends N against; zero
	// means report.DefaultBudget (10 % of a family's region WSS).
	Budget report.Budget
	// DrainInterval is the drainer's idle polling period.
	DrainInterval time.Duration
	// Now is the clock for records without a time, log file names and
	// ages, and the live window; nil means time.Now.
	Now func() time.Time
	// Logger receives sample log failures; nil discards them.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, sampling on at DefaultRate.
func DefaultConfig() Config {
	c := Config{Rate: DefaultRate}
	_ = c.validate()
	return c
}

// FieldError is a refused value of one Config field.
type FieldError struct {
	// Field is the Config field's Go name, with the index for a family
	// rule: "MaxFileAge", "Families[1]".
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "sampler: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// Validate reports every refused field of c (zero fields mean their
// defaults and pass). Each is a *FieldError; several are joined.
func (c Config) Validate() error {
	var errs []error
	refuse := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if c.RingSize != 0 && (c.RingSize < 2 || c.RingSize&(c.RingSize-1) != 0) {
		refuse("RingSize", "%d is not a power of two ≥ 2", c.RingSize)
	}
	for _, f := range []struct {
		field string
		neg   bool
	}{
		{"MaxFileBytes", c.MaxFileBytes < 0}, {"MaxFileAge", c.MaxFileAge < 0}, {"Window", c.Window < 0},
		{"MaxLiveRecords", c.MaxLiveRecords < 0}, {"DrainInterval", c.DrainInterval < 0},
	} {
		if f.neg {
			refuse(f.field, "must not be negative")
		}
	}
	for i, r := range c.Families {
		if _, err := family.New([]family.Rule{r}); err != nil {
			refuse(fmt.Sprintf("Families[%d]", i), "%s", strings.TrimPrefix(err.Error(), "family rule 0: "))
		}
	}
	return errors.Join(errs...)
}

// validate rejects nonsense and fills defaults.
func (c *Config) validate() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.RingSize == 0 {
		c.RingSize = DefaultRingSize
	}
	if c.MaxFileBytes == 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.MaxFileAge == 0 {
		c.MaxFileAge = DefaultMaxFileAge
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.MaxLiveRecords == 0 {
		c.MaxLiveRecords = DefaultMaxLiveRecords
	}
	if c.DrainInterval == 0 {
		c.DrainInterval = DefaultDrainInterval
	}
	if c.Cluster == "" {
		c.Cluster = DefaultCluster
	}
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}
