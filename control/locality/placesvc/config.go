package placesvc

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/placement"
)

// Bounds of Config.Grace: the data plane's fill lease is whole seconds
// (see Validate), and memcached's longest relative TTL bounds max_ttl.
const (
	MinGrace = time.Second
	MaxGrace = 30 * 24 * time.Hour
)

// Defaults of Config.
const (
	DefaultGrace = 10 * time.Second
	// DefaultTick is a multiple of the stall heartbeat's idle period
	// (internal/stall), so on the process's timer grid (internal/tickgrid)
	// an idle leader's rounds cost no wake-up of their own.
	DefaultTick       = 125 * time.Millisecond
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
	// Regions[0] is the region of the strata that runs the service, its
	// own; each name passes CheckRegion and is given once.
	Regions []string
	// Grace is how long a destination fills from the source before the
	// move settles; at least the data plane's fill lease TTL (whole
	// seconds, so at least MinGrace), and at most Policy.MaxTTL when that
	// is set: past max_ttl the source holds nothing worth reading.
	// Zero is the default, fitted to Policy.MaxTTL: DefaultGrace, or
	// Policy.MaxTTL when that is shorter (see GraceFor). A Grace given
	// above Policy.MaxTTL is refused rather than lowered.
	Grace time.Duration
	// Seed makes the tie-breaks of Decide reproducible.
	Seed uint64
	// Candidate names this process in the election row.
	Candidate string
	// Tick is the period of the leader's rounds (waits for acks and grace
	// windows, decisions due). Default 125ms.
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

// FieldError is a refused value of one Config field: "Grace", or
// "Regions[2]" for one region. The policy's own fields are refused as
// *placement.FieldError.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "placesvc: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// regionRE is a region's name: it is a store key's segment and a metrics
// label, so it is short and holds no separator.
var regionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// CheckRegion reports whether name can name a region.
func CheckRegion(name string) error {
	switch {
	case name == "":
		return errors.New("every region needs a name")
	case !regionRE.MatchString(name):
		return fmt.Errorf("%q: want letters, digits, '_', '-' or '.', at most 64", name)
	}
	return nil
}

// CheckPin reports whether region may pin μ-shards: one of Regions.
func (c *Config) CheckPin(region string) error {
	if !c.knows(region) {
		return fmt.Errorf("%q is neither this region nor a peer's", region)
	}
	return nil
}

// DefaultConfig is a Config with every default but Regions and
// Candidate; Grace is zero, to be fitted to Policy.MaxTTL.
func DefaultConfig() Config {
	return Config{
		Prefix: loctable.DefaultPrefix, Policy: placement.DefaultLocalityPolicy(),
		Tick: DefaultTick, SessionTTL: DefaultSessionTTL, Timeout: DefaultTimeout,
		CapacityCeiling: DefaultCapacityCeiling, CapacityMaxAge: DefaultCapacityMaxAge,
		FenceAfter: locsvc.DefaultFenceAfter,
	}
}

// GraceFor is the default grace window under a policy whose MaxTTL is
// maxTTL (0: unbounded): DefaultGrace, lowered to maxTTL when that is
// shorter. The default is fitted rather than refused, since nobody wrote
// it; a Grace given above max_ttl is refused by Validate.
func GraceFor(maxTTL time.Duration) time.Duration {
	if maxTTL > 0 && maxTTL < DefaultGrace {
		return maxTTL
	}
	return DefaultGrace
}

// validate fills c's zero fields with their defaults, then checks it.
func (c *Config) validate() error {
	d := DefaultConfig()
	c.Policy, _ = c.Policy.Validated() // zero policy fields filled; Validate reports the rest
	if c.Prefix == "" {
		c.Prefix = d.Prefix
	}
	if c.Tick == 0 {
		c.Tick = d.Tick
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = d.SessionTTL
	}
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	if c.CapacityCeiling == 0 {
		c.CapacityCeiling = d.CapacityCeiling
	}
	if c.CapacityMaxAge == 0 {
		c.CapacityMaxAge = d.CapacityMaxAge
	}
	if err := c.check(time.Nanosecond); err != nil {
		return err
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Validate checks c as it is, each refused field a *FieldError or, for
// the policy's, a *placement.FieldError (several are joined); a caller
// that reads "unset" as the default starts from DefaultConfig. The one
// default it applies is Grace's, which follows Policy.MaxTTL: a zero
// Grace becomes GraceFor(Policy.MaxTTL).
//
// Validate requires Grace >= MinGrace, the least a fleet with a data
// plane may use: the router's fill lease is whole seconds, and the grace
// window must outlast it. NewRunner accepts any positive Grace, for tests
// that run no data plane.
func (c *Config) Validate() error { return c.check(MinGrace) }

// check is Validate with minGrace the least Grace accepted.
func (c *Config) check(minGrace time.Duration) error {
	errs := []error{c.Policy.Validate()}
	bad := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if len(c.Regions) == 0 {
		bad("Regions", "no regions")
	}
	seen := map[string]int{}
	for i, r := range c.Regions {
		field := fmt.Sprintf("Regions[%d]", i)
		j, dup := seen[r]
		switch err := CheckRegion(r); {
		case err != nil:
			errs = append(errs, &FieldError{Field: field, Err: err})
		case dup && j == 0:
			bad(field, "%q is this strata's own region", r)
		case dup:
			bad(field, "%q is given twice", r)
		default:
			seen[r] = i
		}
	}
	if err := loctable.CheckPrefix(c.Prefix); err != nil {
		errs = append(errs, &FieldError{Field: "Prefix", Err: err})
	}
	if c.Grace == 0 {
		c.Grace = GraceFor(c.Policy.MaxTTL)
	}
	switch maxTTL := c.Policy.MaxTTL; {
	case c.Grace < minGrace || c.Grace > MaxGrace:
		bad("Grace", "%v is out of range: %v to 720h", c.Grace, minGrace)
	case maxTTL > 0 && c.Grace > maxTTL:
		bad("Grace", "%v is above max_ttl (%v): the source's values have expired by then", c.Grace, maxTTL)
	}
	if !(c.CapacityCeiling > 0 && c.CapacityCeiling <= 1) {
		bad("CapacityCeiling", "%v is out of range: above 0, at most 1 (the fraction of the region's cache memory in use)", c.CapacityCeiling)
	}
	if err := locsvc.CheckFenceAfter(c.FenceAfter); err != nil {
		errs = append(errs, &FieldError{Field: "FenceAfter", Err: err})
	}
	if c.CapacityMaxAge <= 0 {
		bad("CapacityMaxAge", "%v: must be positive", c.CapacityMaxAge)
	}
	if c.Tick <= 0 || c.Timeout <= 0 {
		bad("Tick", "tick %v and timeout %v: must be positive", c.Tick, c.Timeout)
	}
	if c.SessionTTL < 1 {
		bad("SessionTTL", "%d: must be at least 1", c.SessionTTL)
	}
	return errors.Join(errs...)
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
