package layered

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/fillguard"
	"github.com/strata-cache/strata/tiers/promote"
)

// Config is the layering's tunable part.
type Config struct {
	// Threshold is the global N: an L2 hit is promoted with probability 1/N.
	// Default 32 (the paper's value).
	Threshold uint32
	// Rules override Threshold for key prefixes; the longest prefix wins.
	Rules []promote.Rule
	// L1MaxTTL bounds how long a promoted copy may live in L1, and so how
	// stale another cluster's L1 can be after a write elsewhere. Default 60s.
	L1MaxTTL time.Duration
	// Rand draws the promotion coin; default math/rand/v2's generator.
	// Tests inject a deterministic source.
	Rand func() uint64
}

// Defaults of Config.
const (
	DefaultThreshold = 32
	DefaultL1MaxTTL  = 60 * time.Second
)

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Threshold: DefaultThreshold, L1MaxTTL: DefaultL1MaxTTL}
}

// FieldError is a refused value of one Config field. The promotion
// policy's own fields (Threshold, Rules) are refused by promote, as a
// *promote.FieldError with the same field names.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "L1MaxTTL"
	Err   error
}

func (e *FieldError) Error() string { return "layered: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// Validate reports every refused field of c as it stands (a zero
// Threshold or L1MaxTTL is refused: New fills the defaults before it
// validates, Validate does not). Several errors are joined.
func (c Config) Validate() error {
	var errs []error
	if err := promote.Validate(c.Threshold, c.Rules); err != nil {
		errs = append(errs, err)
	}
	if err := CheckL1MaxTTL(c.L1MaxTTL); err != nil {
		errs = append(errs, &FieldError{Field: "L1MaxTTL", Err: err})
	}
	return errors.Join(errs...)
}

// validate fills the defaults of zero fields, then validates.
func (c *Config) validate() error {
	if c.Threshold == 0 {
		c.Threshold = DefaultThreshold
	}
	if c.L1MaxTTL == 0 {
		c.L1MaxTTL = DefaultL1MaxTTL
	}
	if c.Rand == nil {
		c.Rand = rand.Uint64
	}
	return c.Validate()
}

// Bounds of Config.L1MaxTTL: a promoted copy lives at least a second, and
// at most memcached's longest relative TTL, 30 days.
const (
	MinL1MaxTTL = time.Second
	MaxL1MaxTTL = 30 * 24 * time.Hour
)

// CheckL1MaxTTL reports whether d is a valid cap on promoted copies' TTL.
func CheckL1MaxTTL(d time.Duration) error {
	if d < MinL1MaxTTL || d > MaxL1MaxTTL {
		return fmt.Errorf("%v is out of range: 1s to 720h (30 days)", d)
	}
	return nil
}

// Tier layers L1 over L2. It is itself a tiers.Tier.
type Tier struct {
	l1, l2 tiers.Tier // l1 is nil for a single-tier proxy
	rnd    func() uint64
	seq    *fillguard.Guard // orders promotions against writes of their keys
	jobs   sync.Pool

	policy   atomic.Pointer[promote.Policy]
	l1MaxTTL atomic.Int64 // seconds
	exec     Executor

	stats counters
}

var _ tiers.Tier = (*Tier)(nil)

// promotionSlots is how finely promotions are ordered against writes: keys
// that share a slot only cost each other a skipped promotion now and then.
// promotionSlotSeed keeps the slots independent of the routers' and the
// sampler's hashes.
const (
	promotionSlots    = 4096
	promotionSlotSeed = 0x5eed_1a7e_0000_0001
)

// Executor runs fn on event loop `loop`, later and asynchronously (the
// proxy's loop handle, proxy.Loops), so that a write delayed behind a
// promotion resumes on its own loop.
type Executor interface {
	Run(loop int, fn func())
}

// New layers l1 over l2 and resumes delayed writes through exec, which is
// required. l1 may be nil: then every operation goes to l2.
func New(cfg Config, l1, l2 tiers.Tier, exec Executor) (*Tier, error) {
	if l2 == nil {
		return nil, errors.New("layered: L2 tier is required")
	}
	if exec == nil {
		return nil, errors.New("layered: an executor (the event loops) is required")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	p, err := promote.NewPolicy(cfg.Threshold, cfg.Rules)
	if err != nil {
		return nil, err
	}
	t := &Tier{l1: l1, l2: l2, rnd: cfg.Rand, seq: fillguard.New(promotionSlots, promotionSlotSeed), exec: exec}
	t.policy.Store(p)
	t.l1MaxTTL.Store(int64(cfg.L1MaxTTL / time.Second))
	t.jobs.New = func() any { return newJob(t) }
	return t, nil
}

// SetPolicy replaces the promotion policy; it applies to the next L2 hit.
func (t *Tier) SetPolicy(p *promote.Policy) { t.policy.Store(p) }

// Policy returns the promotion policy in force.
func (t *Tier) Policy() *promote.Policy { return t.policy.Load() }

// SetL1MaxTTL changes the cap on promoted copies' TTL.
func (t *Tier) SetL1MaxTTL(d time.Duration) error {
	if err := CheckL1MaxTTL(d); err != nil {
		return fmt.Errorf("l1 max ttl: %w", err)
	}
	t.l1MaxTTL.Store(int64(d / time.Second))
	return nil
}

// L1MaxTTL returns the cap on promoted copies' TTL.
func (t *Tier) L1MaxTTL() time.Duration { return time.Duration(t.l1MaxTTL.Load()) * time.Second }

// HasL1 reports whether there is an L1 tier.
func (t *Tier) HasL1() bool { return t.l1 != nil }

// Do routes op by the tier semantics of the design: cacheable reads go
// through L1 then L2, reads that need the value of record go to L2 only,
// and writes go to L2 and then invalidate L1.
func (t *Tier) Do(op *tiers.Op) {
	j := t.jobs.Get().(*job)
	j.parent = op
	switch classify(&op.Req) {
	case classCacheableRead:
		if t.l1 == nil {
			j.readL2()
			return
		}
		j.readL1()
	case classAuthoritativeRead:
		j.passL2(false)
	case classWrite:
		j.passL2(t.l1 != nil)
	case classFlush:
		t.seq.BumpAll()
		j.flush()
	}
}

// Phase groups requests for ordering within one client connection. A
// cacheable read may take two hops (L1, then L2 on a miss), so an L2
// operation issued after it could reach L2 before its second hop, and a read
// issued after a write could find L1 not yet invalidated. Requests of
// different phases must therefore not be in flight together on one
// connection; requests of one phase may (reads commute with reads, and L2
// operations keep their order on the L2 connection; the proxy still holds
// a read back behind an earlier read of its key, so that it cannot answer
// an older value). Without an L1 every request is one hop, and needs no
// constraint (phase 0). When both tiers answer within Do nothing is ever in
// flight to be overtaken; the proxy knows that case (it owns no pool) and
// then does not ask.
func (t *Tier) Phase(r *tiers.Request) uint8 {
	if t.l1 == nil {
		return 0
	}
	if classify(r) == classCacheableRead {
		return 1
	}
	return 2
}

type class uint8

const (
	classCacheableRead class = iota
	classAuthoritativeRead
	classWrite
	classFlush
)

// classify decides which path a request takes. A get may be served from L1
// only when it asks for nothing that L1's copy could get wrong
// (tiers.Request.Cacheable): CAS, TTL, access facts and the meta win/stale
// machinery belong to L2, the tier of record.
func classify(r *tiers.Request) class {
	switch r.Kind {
	case tiers.KindGet:
		if r.HasTTL {
			return classWrite // touch/gat change the TTL of record
		}
		if !r.Cacheable() {
			return classAuthoritativeRead
		}
		return classCacheableRead
	case tiers.KindFlush:
		return classFlush
	default:
		return classWrite
	}
}
