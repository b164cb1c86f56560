package locsvc

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/placement"
)

// Bounds of Config fields.
const (
	MinCounterInterval = 10 * time.Millisecond // below it counter batches cost more than they tell
	MaxCounterInterval = time.Hour             // above it migrate_after's comparisons starve
	MaxFenceAfter      = 24 * time.Hour
	// DefaultFenceAfter is DefaultConfig's FenceAfter: a strata cut off
	// from the store alone stops serving its region's μ-shards after 30s.
	// The zero FenceAfter of a Config literal means never fenced.
	DefaultFenceAfter = 30 * time.Second
)

// FieldError is a refused value of one Config field.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "CounterInterval"
	Err   error
}

func (e *FieldError) Error() string { return "locsvc: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// DefaultConfig is a Config with every default but Region and Member,
// FenceAfter at DefaultFenceAfter.
func DefaultConfig() Config {
	return Config{
		Prefix: loctable.DefaultPrefix, ReadTimeout: DefaultReadTimeout, CreateTimeout: DefaultCreateTimeout,
		CounterInterval: DefaultCounterInterval, LocalEvery: DefaultLocalEvery, SessionTTL: DefaultSessionTTL,
		CacheCapacity: DefaultCacheCapacity, UpdateBatch: DefaultUpdateBatch, AckInterval: DefaultAckInterval,
		CapacityEvery: DefaultCapacityEvery, FenceAfter: DefaultFenceAfter, HalfLife: placement.DefaultHalfLife,
	}
}

// CheckFenceAfter is the rule of FenceAfter, which the placement service
// shares: 0 (never fenced) or 1s to 24h.
func CheckFenceAfter(d time.Duration) error {
	if d != 0 && (d < time.Second || d > MaxFenceAfter) {
		return fmt.Errorf("%v is out of range: 0s (off) or 1s to %v", d, MaxFenceAfter)
	}
	return nil
}

// validate fills c's zero fields with their defaults (FenceAfter stays
// 0: off), then checks it and the member name.
func (c *Config) validate() error {
	d := DefaultConfig()
	fill := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	fillInt := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	if c.Prefix == "" {
		c.Prefix = d.Prefix
	}
	fill(&c.ReadTimeout, d.ReadTimeout)
	fill(&c.CreateTimeout, d.CreateTimeout)
	fill(&c.CounterInterval, d.CounterInterval)
	fill(&c.AckInterval, d.AckInterval)
	fill(&c.HalfLife, d.HalfLife)
	fillInt(&c.SessionTTL, d.SessionTTL)
	fillInt(&c.CacheCapacity, d.CacheCapacity)
	fillInt(&c.UpdateBatch, d.UpdateBatch)
	fillInt(&c.LocalEvery, d.LocalEvery)
	fillInt(&c.CapacityEvery, d.CapacityEvery)
	if err := c.Validate(); err != nil {
		return err
	}
	if err := checkMember(c.Member); err != nil {
		return err
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Validate checks c as it is, each refused field a *FieldError (several
// are joined); a caller that reads "unset" as the default starts from
// DefaultConfig. Member, which names a process rather than configures
// one, is checked by New.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if c.Region == "" || len(c.Region) > 255 {
		bad("Region", "%q: must be 1 to 255 bytes", c.Region)
	}
	if err := loctable.CheckPrefix(c.Prefix); err != nil {
		errs = append(errs, &FieldError{Field: "Prefix", Err: err})
	}
	if c.CounterInterval < MinCounterInterval || c.CounterInterval > MaxCounterInterval {
		bad("CounterInterval", "%v is out of range: %v to %v", c.CounterInterval, MinCounterInterval, MaxCounterInterval)
	}
	if err := CheckFenceAfter(c.FenceAfter); err != nil {
		errs = append(errs, &FieldError{Field: "FenceAfter", Err: err})
	}
	if c.HalfLife < time.Second {
		bad("HalfLife", "%v is out of range: at least 1s (the placement policy's half_life)", c.HalfLife)
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"ReadTimeout", c.ReadTimeout}, {"CreateTimeout", c.CreateTimeout}, {"AckInterval", c.AckInterval}} {
		if f.v <= 0 {
			bad(f.name, "%v: must be positive", f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"SessionTTL", c.SessionTTL}, {"CacheCapacity", c.CacheCapacity}, {"UpdateBatch", c.UpdateBatch},
		{"LocalEvery", c.LocalEvery}, {"CapacityEvery", c.CapacityEvery}} {
		if f.v < 1 {
			bad(f.name, "%d: must be at least 1", f.v)
		}
	}
	return errors.Join(errs...)
}
