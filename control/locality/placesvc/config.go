package placesvc

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/placement"
)

// Defaults of Config.
const (
	DefaultGrace      = 10 * time.Second
	DefaultTick       = 100 * time.Millisecond
	DefaultSessionTTL = 5
	DefaultTimeout    = 2 * time.Second
	// DefaultCapacityCeiling: a region whose cache is 90 % full takes no
	// more μ-shards by the policy.
	DefaultCapacityCeiling = 0.9
	// DefaultCapacityMaxAge is three times the longest a member goes
	// without rewriting its capacity row at the location service's
	// defaults (CapacityEvery counter intervals): one late write is
	// tolerated, a member that stopped reporting is not.
	DefaultCapacityMaxAge = 3 * locsvc.DefaultCapacityEvery * locsvc.DefaultCounterInterval
)

// CapacityMaxAgeFor is the CapacityMaxAge for members that ship their
// counters every counterInterval and rewrite an unchanged capacity row
// every locsvc.DefaultCapacityEvery intervals: three of their longest
// gaps between two writes.
func CapacityMaxAgeFor(counterInterval time.Duration) time.Duration {
	return 3 * locsvc.DefaultCapacityEvery * counterInterval
}

// Config configures the placement service.
type Config struct {
	// Prefix is the locality prefix in the store (loctable.DefaultPrefix).
	Prefix string
	// Policy is the migration policy; it is validated (defaults filled).
	Policy placement.LocalityPolicy
	// Regions are every region's name: the candidates of a migration.
	Regions []string
	// Grace is how long a destination fills from the source before the
	// move settles; at least the data plane's fill lease TTL. Default 10s.
	Grace time.Duration
	// Seed makes the tie-breaks of Decide reproducible.
	Seed uint64
	// Candidate names this process in the election row.
	Candidate string
	// Tick is the period of the leader's rounds (waits for acks and grace
	// windows, decisions due). Default 100ms.
	Tick time.Duration
	// SessionTTL is the leadership's lease, in seconds. Default 5.
	SessionTTL int
	// Timeout bounds one store operation. Default 2s.
	Timeout time.Duration
	// CapacityCeiling is the fraction of a region's cache memory in use
	// (the members' capacity reports) at or above which the policy moves
	// no μ-shard there; when every reporting region is at or above it,
	// it steers nothing (see RegionCapacities). In (0, 1]; default 0.9.
	CapacityCeiling float64
	// CapacityMaxAge: a capacity report older than this is ignored (the
	// member stopped reporting, or its clock is far behind). At least
	// the members' CapacityEvery × CounterInterval; default 30s.
	CapacityMaxAge time.Duration
	// FenceAfter is the members' locsvc.Config.FenceAfter, the same value:
	// a move stops waiting for a member whose lease ended only this long
	// after the leader saw it end, and a new leader waits this long
	// before its first step of a move (members whose lease ended before
	// it led are unknown to it). By then such a member no longer serves
	// its region's μ-shards on the view it may have missed the move in.
	// 0: a member stops counting when its lease ends.
	FenceAfter time.Duration
	// Now is the clock of every decision. Default time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

func (c *Config) validate() error {
	p, err := c.Policy.Validated()
	if err != nil {
		return fmt.Errorf("placesvc: %w", err)
	}
	c.Policy = p
	if len(c.Regions) == 0 {
		return errors.New("placesvc: no regions")
	}
	seen := map[string]bool{}
	for _, r := range c.Regions {
		if r == "" || seen[r] {
			return fmt.Errorf("placesvc: region %q empty or listed twice", r)
		}
		seen[r] = true
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.Tick == 0 {
		c.Tick = DefaultTick
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.CapacityCeiling == 0 {
		c.CapacityCeiling = DefaultCapacityCeiling
	}
	if c.CapacityMaxAge == 0 {
		c.CapacityMaxAge = DefaultCapacityMaxAge
	}
	if !(c.CapacityCeiling > 0 && c.CapacityCeiling <= 1) {
		return fmt.Errorf("placesvc: capacity ceiling %v: must be above 0 and at most 1", c.CapacityCeiling)
	}
	if c.CapacityMaxAge < 0 {
		return errors.New("placesvc: capacity max age must be positive")
	}
	if c.Grace < 0 || c.Tick < 0 || c.Timeout < 0 || c.SessionTTL < 1 || c.FenceAfter < 0 {
		return errors.New("placesvc: grace, tick, timeout and session ttl must be positive")
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// knows reports whether r is a configured region.
func (c *Config) knows(r string) bool {
	for _, x := range c.Regions {
		if x == r {
			return true
		}
	}
	return false
}
