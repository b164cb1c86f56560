package locality

import (
	"fmt"
	"time"

	"github.com/strata-cache/strata/tiers/handoff"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// Defaults of Config.
const (
	DefaultMaxTTL         = 6 * time.Hour
	DefaultForwardTimeout = time.Second
	DefaultFillLease      = 10 * time.Second
)

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
	// Default 1s.
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

func (c *Config) validate() error {
	if c.Region == "" {
		return fmt.Errorf("locality: a region is required")
	}
	if c.MaxTTL == 0 {
		c.MaxTTL = DefaultMaxTTL
	}
	if c.MaxTTL < time.Second || c.MaxTTL > handoff.MaxRelativeTTL*time.Second || c.MaxTTL%time.Second != 0 {
		return fmt.Errorf("locality: max ttl %v: must be whole seconds, 1s to 30 days", c.MaxTTL)
	}
	if c.ForwardTimeout == 0 {
		c.ForwardTimeout = DefaultForwardTimeout
	}
	if c.ForwardTimeout < time.Millisecond || c.ForwardTimeout > 5*time.Minute {
		return fmt.Errorf("locality: forward timeout %v: must be 1ms to 5m", c.ForwardTimeout)
	}
	if c.FillLease == 0 {
		c.FillLease = min(DefaultFillLease, c.MaxTTL)
	}
	if c.FillLease < time.Second || c.FillLease > c.MaxTTL || c.FillLease%time.Second != 0 {
		return fmt.Errorf("locality: fill lease %v: must be whole seconds, 1s to max ttl (%v)", c.FillLease, c.MaxTTL)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
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
