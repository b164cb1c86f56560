package locality

import (
	"errors"
	"fmt"
	"time"

	"github.com/strata-cache/strata/tiers/handoff"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// Defaults of Config.
const (
	DefaultMaxTTL         = 6 * time.Hour // placement's default min_interval, the most it may be
	DefaultForwardTimeout = time.Second   // a WAN round trip with room to spare
	DefaultFillLease      = 10 * time.Second
)

// MaxForwardTimeout bounds Config.ForwardTimeout: a request that waits
// longer for its location has been given up by its client.
const MaxForwardTimeout = time.Minute

// MaxTTLLimit bounds Config.MaxTTL: memcached's longest relative TTL.
const MaxTTLLimit = handoff.MaxRelativeTTL * time.Second

// Config is the router's configuration.
type Config struct {
	// Region is this strata's region. Required.
	Region string
	// MaxTTL bounds the life of every μ-shard value written through this
	// strata (max_ttl): a write's TTL is clamped to it, "never" included.
	// It must not exceed the placement's min_interval, so a μ-shard never
	// returns to a region while a value it left there lives. Default 6h;
	// whole seconds, at most 30 days.
	MaxTTL time.Duration
	// ForwardTimeout bounds how long a request waits for its location
	// (forward_timeout); the link client's own Timeout bounds the forward.
	// Default 1s; 1ms to 1m.
	ForwardTimeout time.Duration
	// FillLease is the TTL of the placeholder a miss at a migration's
	// destination takes while it reads the source (mg N). The grace window
	// must be at least this long; a placeholder is a key's item too, so it
	// is bounded by MaxTTL. Default 10s (MaxTTL if shorter); whole
	// seconds.
	FillLease time.Duration
	// Cache sizes each event loop's location cache.
	Cache loccache.Config
	// Now is the clock for absolute expiry times. Default time.Now.
	Now func() time.Time
}

// FieldError is a refused value of one Config field.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "MaxTTL"
	Err   error
}

func (e *FieldError) Error() string { return "locality: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// DefaultConfig is a Config with every default but Region; FillLease is
// left zero, to follow MaxTTL.
func DefaultConfig() Config {
	return Config{MaxTTL: DefaultMaxTTL, ForwardTimeout: DefaultForwardTimeout,
		Cache: loccache.Config{Capacity: loccache.DefaultCapacity}}
}

// validate fills c's zero fields with their defaults, then checks it.
func (c *Config) validate() error {
	d := DefaultConfig()
	if c.MaxTTL == 0 {
		c.MaxTTL = d.MaxTTL
	}
	if c.ForwardTimeout == 0 {
		c.ForwardTimeout = d.ForwardTimeout
	}
	if c.Cache.Capacity == 0 {
		c.Cache = d.Cache
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Validate checks c as it is, each refused field a *FieldError (several
// are joined); a caller that reads "unset" as the default starts from
// DefaultConfig. The one default it applies is FillLease's, which
// follows MaxTTL: a zero FillLease becomes DefaultFillLease, or MaxTTL
// when that is shorter.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) { errs = append(errs, fieldErr(field, format, args...)) }
	if c.Region == "" {
		bad("Region", "required")
	}
	maxTTLOK := c.MaxTTL >= time.Second && c.MaxTTL <= MaxTTLLimit && c.MaxTTL%time.Second == 0
	if !maxTTLOK {
		bad("MaxTTL", "%v is out of range: whole seconds, 1s to 720h (memcached's longest relative TTL)", c.MaxTTL)
	}
	if c.ForwardTimeout < time.Millisecond || c.ForwardTimeout > MaxForwardTimeout {
		bad("ForwardTimeout", "%v is out of range: 1ms to %v", c.ForwardTimeout, MaxForwardTimeout)
	}
	if c.FillLease == 0 && maxTTLOK {
		c.FillLease = min(DefaultFillLease, c.MaxTTL)
	}
	if maxTTLOK && (c.FillLease < time.Second || c.FillLease > c.MaxTTL || c.FillLease%time.Second != 0) {
		bad("FillLease", "%v is out of range: whole seconds, 1s to max ttl (%v)", c.FillLease, c.MaxTTL)
	}
	if err := c.Cache.Validate(); err != nil {
		errs = append(errs, &FieldError{Field: "Cache", Err: err})
	}
	return errors.Join(errs...)
}

// clampTTL bounds an expiry as a client wrote it (memcached's convention:
// 0 never, negative already expired, up to 30 days relative seconds,
// above that a Unix time) to at most maxTTL seconds from now, returned as
// relative seconds. An expired one stays as it is. now is Unix seconds.
func clampTTL(ttl, maxTTL, now int64) int64 {
	switch {
	case ttl < 0:
		return ttl
	case ttl == 0:
		return maxTTL
	case ttl > handoff.MaxRelativeTTL:
		ttl -= now
		if ttl <= 0 {
			return -1 // an absolute time in the past: expired
		}
	}
	return min(ttl, maxTTL)
}
