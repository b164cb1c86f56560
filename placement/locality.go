package placement

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// Defaults of LocalityPolicy.
const (
	DefaultHalfLife     = time.Hour
	DefaultMigrateAfter = 10 * time.Minute
	DefaultMinInterval  = 6 * time.Hour // Akkio's example policy
	DefaultRate         = 10            // migrations per second per ordered pair of regions
	DefaultBurst        = 100
	DefaultEvidence     = 1.5
)

// LocalityPolicy is the μ-shard migration policy. Zero fields take their
// defaults.
type LocalityPolicy struct {
	// HalfLife is the decay of the access counters: an access counts half
	// as much after one half-life. Default 1h.
	HalfLife time.Duration
	// MigrateAfter (migrate_after) is how long after a μ-shard's first
	// remote access it may move: a burst of remote use shorter than that
	// moves nothing. Default 10m.
	MigrateAfter time.Duration
	// MinInterval (min_interval) is the least time between two migrations
	// of one μ-shard. Default 6h.
	MinInterval time.Duration
	// MaxTTL (max_ttl) is the longest a μ-shard's value lives in a region;
	// 0: not checked here. MinInterval must be at least MaxTTL: a μ-shard
	// that left a region may only return once every value it left there
	// has expired, or a read there could find one older than a write made
	// elsewhere since.
	MaxTTL time.Duration
	// Rate and Burst cap migrations from one region to another: a token
	// bucket per ordered pair of regions, filling at Rate per second up to
	// Burst. Defaults 10 and 100. Per pair, because what a move costs (WAN
	// bytes, a cold cache) is paid by its two regions, and a diurnal shift
	// between two regions must not wait behind another pair's.
	Rate  float64
	Burst float64
	// Evidence is how much more another region must score than the
	// owner: a μ-shard moves only when that region's decayed count is
	// above Evidence × the owner's (and above MinEvidence). The owner's
	// score is its own rate of use at home, so the evidence asked grows
	// with it. A return to the region the μ-shard last left asks only to
	// score above the owner (see Outscores). At least 1 (1: any region
	// scoring above the owner); default 1.5.
	Evidence float64
}

// validate fills p's zero fields with their defaults, then checks it.
func (p *LocalityPolicy) validate() error {
	d := DefaultLocalityPolicy()
	if p.HalfLife == 0 {
		p.HalfLife = d.HalfLife
	}
	if p.MigrateAfter == 0 {
		p.MigrateAfter = d.MigrateAfter
	}
	if p.MinInterval == 0 {
		p.MinInterval = d.MinInterval
	}
	if p.Rate == 0 {
		p.Rate = d.Rate
	}
	if p.Burst == 0 {
		p.Burst = d.Burst
	}
	if p.Evidence == 0 {
		p.Evidence = d.Evidence
	}
	return p.Validate()
}

// Validated returns p with its defaults filled, or why it is unusable.
// Decide takes a validated policy.
func (p LocalityPolicy) Validated() (LocalityPolicy, error) {
	err := p.validate()
	return p, err
}

// RegionState is what the decision knows of a region.
type RegionState struct {
	Name string
	// OverCapacity excludes the region as a migration target (a pin still
	// moves μ-shards there).
	OverCapacity bool
	// Spare is the region's spare capacity, in any unit the caller uses
	// for every region: the first tie-break between equal scores.
	Spare float64
}

// MuShardState is what the decision knows of one μ-shard.
type MuShardState struct {
	Owner string
	// Counters are the μ-shard's decayed accesses by region name; a region
	// without an entry has none.
	Counters map[string]Decayed
	// Visits are its decayed visits by region name (see Visits; counted
	// with LocalityPolicy.Visit): how many separate times a region used
	// it, where Counters say how much. A region without an entry has
	// none, and takes the μ-shard only as a return.
	Visits map[string]Visits
	// Pairs is the state of each claimant region's pair with the owner
	// (see Shift); a region without an entry is PairUsual.
	Pairs map[string]PairState
	// LastMigration is when the μ-shard last changed owner; zero: never.
	LastMigration time.Time
	// Left is the region the μ-shard last moved away from ("" if it never
	// moved): a move back there is a return.
	Left string
	// FirstRemote is its first access from a region other than Owner since
	// LastMigration; zero: none.
	FirstRemote time.Time
	// Pin is the operator's region for this μ-shard, RulePin the one for
	// its whole rule; "" is no pin. Pin wins over RulePin; either wins over
	// everything the automatic policy weighs.
	Pin, RulePin string
}

// Reason says why Decide decided.
type Reason uint8

// The reasons, in the order Decide checks them.
const (
	// ReasonPinned: the owner is the pinned region.
	ReasonPinned Reason = iota + 1
	// ReasonPinUnknown: the pin names no region Decide was given; the
	// μ-shard stays where it is (a pin is never overridden by the policy).
	ReasonPinUnknown
	// ReasonPin: a migration to the pinned region.
	ReasonPin
	// ReasonMinInterval: the μ-shard migrated less than MinInterval ago.
	ReasonMinInterval
	// ReasonNoRemote: no remote access since its last migration.
	ReasonNoRemote
	// ReasonWaiting: its first remote access is less than MigrateAfter
	// old, and no return is due.
	ReasonWaiting
	// ReasonOwnerBest: no eligible region Outscores the owner.
	ReasonOwnerBest
	// ReasonBetter: a migration to the best-scoring eligible region.
	ReasonBetter
	// ReasonRateLimited: a migration was due but the cap of its pair of
	// regions had no token; the caller decides again later.
	ReasonRateLimited
)

var reasonNames = [...]string{
	ReasonPinned: "pinned", ReasonPinUnknown: "pin_unknown", ReasonPin: "pin",
	ReasonMinInterval: "min_interval", ReasonNoRemote: "no_remote", ReasonWaiting: "waiting",
	ReasonOwnerBest: "owner_best", ReasonBetter: "better", ReasonRateLimited: "rate_limited",
}

func (r Reason) String() string {
	if int(r) < len(reasonNames) && reasonNames[r] != "" {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", uint8(r))
}

// Decision is Decide's answer: stay, or migrate to To.
type Decision struct {
	Migrate bool
	To      string // the destination when Migrate
	Reason  Reason
}

// Decide is the μ-shard migration decision with one bucket for every
// migration: Choose, then a token from b. It is pure: it reads the time
// only from now, randomness only from seed, and returns the bucket with
// the token it took, if it took one. p must be Validated. A caller with a
// bucket per pair of regions calls Choose and takes the token itself.
func Decide(now time.Time, p LocalityPolicy, regions []RegionState, m MuShardState, b Bucket, seed uint64) (Decision, Bucket) {
	d := Choose(now, p, regions, m, seed)
	if !d.Migrate {
		return d, b
	}
	return take(now, p, b, d)
}

// Choose is the μ-shard migration decision before the rate cap: Migrate
// says where the μ-shard should go, and the caller spends a token of the
// cap (Bucket.Take) before it moves, or it stays with ReasonRateLimited.
// It is pure: it reads the time only from now and randomness only from
// seed. p must be Validated.
//
// In order:
//
//  1. A pin (Pin, else RulePin) decides alone: stay if the owner is the
//     pinned region or the pin names no known region, else migrate there,
//     regardless of MinInterval, MigrateAfter, scores and capacity.
//  2. Otherwise the μ-shard stays while it migrated less than MinInterval
//     ago, and while it has had no remote access since. Until MigrateAfter
//     has passed since the first one, only a return may move it.
//  3. Score = decayed accesses as of now. The candidates are the regions
//     other than the owner, not over capacity, that Outscore the owner:
//     the region the μ-shard last left (Left) by scoring above it, any
//     other by scoring above Evidence × the owner's score and above
//     MinEvidence, in accesses and in visits (see Pairs for a pair that
//     shifts or holds). Without one the μ-shard stays (moving costs a cold
//     cache and WAN traffic; staying costs nothing). The best candidate
//     is the highest score, then the most spare capacity, then a seeded
//     random pick.
//
// Pins are paced by the caller's cap too, because a whole-rule pin can
// move every μ-shard of a rule at once. Equal inputs give equal outputs.
func Choose(now time.Time, p LocalityPolicy, regions []RegionState, m MuShardState, seed uint64) Decision {
	if pin := m.Pin; pin != "" || m.RulePin != "" {
		if pin == "" {
			pin = m.RulePin
		}
		switch {
		case pin == m.Owner:
			return Decision{Reason: ReasonPinned}
		case regionIndex(regions, pin) < 0:
			return Decision{Reason: ReasonPinUnknown}
		}
		return Decision{Migrate: true, To: pin, Reason: ReasonPin}
	}
	switch {
	case !m.LastMigration.IsZero() && now.Sub(m.LastMigration) < p.MinInterval:
		return Decision{Reason: ReasonMinInterval}
	case m.FirstRemote.IsZero():
		return Decision{Reason: ReasonNoRemote}
	}
	// A return does not wait MigrateAfter: the region was the μ-shard's
	// home before, and MinInterval has passed since it left.
	waiting := now.Sub(m.FirstRemote) < p.MigrateAfter
	own := m.Counters[m.Owner].Value(now, p.HalfLife)
	best, bestScore := -1, 0.0
	ties := 0
	var rng *rand.Rand
	for i, r := range regions {
		if r.Name == m.Owner || r.OverCapacity || (waiting && r.Name != m.Left) {
			continue
		}
		s := m.Counters[r.Name].Value(now, p.HalfLife)
		if !p.Outscores(s, own, m.Visits[r.Name].Value(now, p.HalfLife), r.Name == m.Left, m.Pairs[r.Name]) {
			continue
		}
		switch {
		case best < 0 || s > bestScore || (s == bestScore && r.Spare > regions[best].Spare):
			best, bestScore, ties = i, s, 1
		case s == bestScore && r.Spare == regions[best].Spare:
			// Reservoir sampling over the tied regions: each of the n
			// ties is kept with probability 1/n, in one pass.
			ties++
			if rng == nil {
				rng = rand.New(rand.NewPCG(seed, 0x6c6f63616c697479))
			}
			if rng.IntN(ties) == 0 {
				best = i
			}
		}
	}
	if best < 0 {
		if waiting {
			return Decision{Reason: ReasonWaiting}
		}
		return Decision{Reason: ReasonOwnerBest}
	}
	return Decision{Migrate: true, To: regions[best].Name, Reason: ReasonBetter}
}

// MinEvidence is the score a region must exceed to take a μ-shard it did
// not just leave, whatever the owner's, both in accesses and in visits:
// one access weighs 1 when it is counted and less once it has decayed at
// all, so a single stray read never moves a μ-shard; two close together
// do. Without it a cold μ-shard (one whose owner scores under 1/Evidence,
// about a use a half-life at home) moves on one foreign read, and its own
// user's requests go remote until MinInterval lets it return.
//
// In visits because one stray use is often two accesses: a read that
// misses and the read-through fill that follows it (a set from the same
// region a round trip later) count 2, which is more than MinEvidence in
// accesses for as long as a half-life. They are one visit; a traveller's
// next request, MigrateAfter or more later, is a second.
const MinEvidence = 1

// Outscores reports whether a region scoring score, in visits, has the
// evidence to take a μ-shard from an owner scoring own; back: the region
// is the one the μ-shard last left (MuShardState.Left); pair: the state
// of the region's pair with the owner (MuShardState.Pairs).
//
// A return needs only to score above the owner: the μ-shard was used
// there before it left, MinInterval has passed, and a traveller's way
// home should not wait for Evidence times the new owner's score. Any
// other move (a claim) needs more than Evidence × own and more than
// MinEvidence, in accesses and in visits; while the pair shifts, more
// than Evidence × own alone; while it holds, no claim moves the μ-shard.
// It is the rule Choose applies to each candidate, exported so a caller
// can skip a decision it knows the answer to (a cheaper check, not a
// different rule).
func (p LocalityPolicy) Outscores(score, own, visits float64, back bool, pair PairState) bool {
	switch {
	case back:
		return score > own
	case !p.Claims(score, own) || pair == PairHolding:
		return false
	}
	return pair == PairShifting || score > MinEvidence && visits > MinEvidence
}

// Claims reports whether a region scoring score, not the one the μ-shard
// left, claims it from an owner scoring own: it scores above Evidence ×
// own. A claim moves the μ-shard with MinEvidence, or with none while its
// pair of regions shifts (Shift).
func (p LocalityPolicy) Claims(score, own float64) bool { return score > p.Evidence*own }

// take spends a token on d, or turns d into a rate-limited stay.
func take(now time.Time, p LocalityPolicy, b Bucket, d Decision) (Decision, Bucket) {
	b, ok := b.Take(now, p.Rate, p.Burst)
	if !ok {
		return Decision{Reason: ReasonRateLimited}, b
	}
	return d, b
}

func regionIndex(regions []RegionState, name string) int {
	for i, r := range regions {
		if r.Name == name {
			return i
		}
	}
	return -1
}
