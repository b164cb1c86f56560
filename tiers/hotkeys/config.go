package hotkeys

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Kind is what a rule does with the hot keys it matches.
type Kind uint8

const (
	// KindCounter splits incr/decr over K sub-keys; reads sum the parts.
	KindCounter Kind = iota + 1
	// KindList splits append/prepend over K sub-keys; reads concatenate.
	KindList
	// KindRead keeps K copies of the key in L1; reads pick one.
	KindRead
)

var kindNames = [...]string{KindCounter: "counter", KindList: "list", KindRead: "read"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// ParseKind reads "counter", "list" or "read".
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n != "" && n == s {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("kind %q: want counter, list or read", s)
}

// MaxSplit bounds K: a read of a split key fetches K+1 keys.
const MaxSplit = 64

// Rule declares the keys under Prefix hot-spot keys of one kind.
type Rule struct {
	Prefix string
	Kind   Kind
	// Split is K, the number of sub-keys (counter, list) or L1 copies
	// (read). 2 to MaxSplit.
	Split int
	// Adaptive: only keys the detector finds hotter than Config.Rate are
	// split; the others keep their writes (or reads) on the base key. Reads
	// of counter and list keys aggregate the sub-keys either way.
	Adaptive bool
	// Reply (counter rules) is what incr and decr answer: ReplyExact (the
	// default, "") the total read with the increment, ReplyBounded a total
	// no older than Staleness, from one operation (bounded.go).
	Reply Reply
	// Staleness bounds the age of a bounded reply's view of the other
	// parts. 0 means DefaultStaleness; MinStaleness to MaxStaleness.
	Staleness time.Duration
	// Near (read rules) keeps a hot key's value in this process for at
	// most this long (near.go); 0 keeps none. MinNear to MaxNear.
	Near time.Duration
}

// Reply is how a counter rule answers incr and decr.
type Reply string

const (
	// ReplyExact answers the total read in the increment's own round.
	ReplyExact Reply = "exact"
	// ReplyBounded answers this strata's own part plus its last view of
	// the others, at most Rule.Staleness old.
	ReplyBounded Reply = "bounded"
)

// Bounds of a rule's durations.
const (
	DefaultStaleness = 100 * time.Millisecond
	MinStaleness     = time.Millisecond
	MaxStaleness     = time.Minute
	MinNear          = time.Millisecond
	// MaxNear: a near copy misses the writes of other stratas; a minute
	// caps that as L1 copies are capped.
	MaxNear = time.Minute
)

// staleness is the rule's staleness in nanoseconds, its default filled.
func (r *Rule) staleness() int64 {
	if r.Staleness == 0 {
		return int64(DefaultStaleness)
	}
	return int64(r.Staleness)
}

// bounded reports whether r answers incr and decr with bounded replies.
func (r *Rule) bounded() bool { return r.Kind == KindCounter && r.Reply == ReplyBounded }

// Defaults of Config.
const (
	DefaultRate     = 1000
	DefaultHold     = 60 * time.Second
	DefaultHalfLife = 5 * time.Second
	DefaultCounters = 512
	DefaultSample   = 4
	// DefaultNearBytes bounds the near cache: a few hundred hot values.
	DefaultNearBytes = 16 << 20
)

// Config is the hot-key tier's tunable part. Zero fields take their
// documented defaults.
type Config struct {
	Rules []Rule
	// Rate is the accesses per second (writes for counter and list rules,
	// reads for read rules), summed over event loops, above which an
	// adaptive rule's key is marked hot. Default 1000.
	Rate float64
	// Hold is how long a marked key stays split after it last measured hot.
	// Default 60s.
	Hold time.Duration
	// HalfLife is the detector's decay: a burst counts half as much after
	// one half-life. Default 5s.
	HalfLife time.Duration
	// Counters is the number of keys each event loop's detector tracks.
	// Default 512.
	Counters int
	// Sample feeds one access in Sample to the detector (weighted by
	// Sample). Default 4.
	Sample int
	// L1MaxTTL caps the TTL of a read rule's L1 copies, as l1.max_ttl caps
	// promoted copies. Default 60s.
	L1MaxTTL time.Duration
	// NearBytes bounds the values (and keys) the near cache of read rules
	// holds, in bytes. Default 16 MiB; MinNearBytes to MaxNearBytes.
	NearBytes int64
	// Now is the time in nanoseconds. The detector and the marks take time
	// only from it. Default: the system clock.
	Now func() int64
}

// Bounds of Config fields.
const (
	MaxRate      = 1e9
	MinHold      = time.Second
	MaxHold      = 24 * time.Hour
	MinHalfLife  = 100 * time.Millisecond
	MaxHalfLife  = time.Hour
	MinCounters  = 8
	MaxCounters  = 1 << 16
	MaxSample    = 1 << 20
	MinNearBytes = 1 << 10
	MaxNearBytes = 1 << 34
)

// DefaultConfig returns the documented defaults, with no rules.
func DefaultConfig() Config {
	return Config{Rate: DefaultRate, Hold: DefaultHold, HalfLife: DefaultHalfLife,
		Counters: DefaultCounters, Sample: DefaultSample, L1MaxTTL: 60 * time.Second,
		NearBytes: DefaultNearBytes}
}

// FieldError is a refused value of one Config field.
type FieldError struct {
	// Field is the Config field's Go name, with the rule's index for a
	// rule's field: "Hold", "Rules[2].Split".
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "hotkeys: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// Validate reports every refused field of c as it stands (a zero is
// refused: New fills the defaults of zero fields before it validates,
// Validate does not). Each is a *FieldError; several are joined.
func (c Config) Validate() error {
	var errs []error
	refuse := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: fmt.Errorf(format, args...)})
	}
	if c.Rate < 1 || c.Rate > MaxRate {
		refuse("Rate", "%v is out of range: 1 to 1000000000 accesses per second", c.Rate)
	}
	// A mark held longer than a day outlives any burst it was measured on.
	if c.Hold < MinHold || c.Hold > MaxHold {
		refuse("Hold", "%v is out of range: 1s to 24h", c.Hold)
	}
	if c.HalfLife < MinHalfLife || c.HalfLife > MaxHalfLife {
		refuse("HalfLife", "%v is out of range: 100ms to 1h", c.HalfLife)
	}
	if c.Counters < MinCounters || c.Counters > MaxCounters {
		refuse("Counters", "%d is out of range: %d to %d", c.Counters, MinCounters, MaxCounters)
	}
	if c.Sample < 1 || c.Sample > MaxSample {
		refuse("Sample", "%d is out of range: 1 (every access) to %d", c.Sample, MaxSample)
	}
	if c.L1MaxTTL < time.Second {
		refuse("L1MaxTTL", "%v: must be at least 1s", c.L1MaxTTL)
	}
	if c.NearBytes < MinNearBytes || c.NearBytes > MaxNearBytes {
		refuse("NearBytes", "%d is out of range: %d to %d bytes", c.NearBytes, int64(MinNearBytes), int64(MaxNearBytes))
	}
	if err := ValidateRules(c.Rules); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// validate fills the defaults of zero fields, then validates.
func (c *Config) validate() error {
	d := DefaultConfig()
	if c.Rate == 0 {
		c.Rate = d.Rate
	}
	if c.Hold == 0 {
		c.Hold = d.Hold
	}
	if c.HalfLife == 0 {
		c.HalfLife = d.HalfLife
	}
	if c.Counters == 0 {
		c.Counters = d.Counters
	}
	if c.Sample == 0 {
		c.Sample = d.Sample
	}
	if c.L1MaxTTL == 0 {
		c.L1MaxTTL = d.L1MaxTTL
	}
	if c.NearBytes == 0 {
		c.NearBytes = d.NearBytes
	}
	if c.Now == nil {
		c.Now = func() int64 { return time.Now().UnixNano() }
	}
	return c.Validate()
}

// ValidateRules checks rules as New and SetRules do. Each refused rule
// field is a *FieldError ("Rules[i].Prefix"); several are joined.
func ValidateRules(rules []Rule) error {
	var errs []error
	refuse := func(i int, field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: fmt.Sprintf("Rules[%d].%s", i, field), Err: fmt.Errorf(format, args...)})
	}
	seen := map[string]bool{}
	for i, r := range rules {
		switch {
		case r.Prefix == "":
			refuse(i, "Prefix", "every rule needs a non-empty prefix (a rule for every key would split them all)")
			continue
		case strings.ContainsAny(r.Prefix, " \t\r\n"):
			refuse(i, "Prefix", "%q: keys have no whitespace", r.Prefix)
			continue
		case seen[r.Prefix]:
			refuse(i, "Prefix", "%q is given twice", r.Prefix)
			continue
		}
		seen[r.Prefix] = true
		if r.Kind < KindCounter || r.Kind > KindRead {
			refuse(i, "Kind", "want counter, list or read")
		}
		if r.Split < 2 || r.Split > MaxSplit {
			refuse(i, "Split", "%d is out of range: 2 to %d", r.Split, MaxSplit)
		}
		switch {
		case r.Reply != "" && r.Reply != ReplyExact && r.Reply != ReplyBounded:
			refuse(i, "Reply", "%q: want exact or bounded", r.Reply)
		case r.Reply == ReplyBounded && r.Kind != KindCounter:
			refuse(i, "Reply", "bounded replies are for counter rules")
		}
		switch {
		case r.Staleness != 0 && r.Reply != ReplyBounded:
			refuse(i, "Staleness", "applies only with reply = bounded")
		case r.Staleness != 0 && (r.Staleness < MinStaleness || r.Staleness > MaxStaleness):
			refuse(i, "Staleness", "%v is out of range: %v to %v", r.Staleness, MinStaleness, MaxStaleness)
		}
		switch {
		case r.Near != 0 && r.Kind != KindRead:
			refuse(i, "Near", "a near cache is for read rules")
		case r.Near != 0 && (r.Near < MinNear || r.Near > MaxNear):
			refuse(i, "Near", "%v is out of range: %v to %v", r.Near, MinNear, MaxNear)
		}
	}
	return errors.Join(errs...)
}

// ruleSet finds the rule of a key: the longest matching prefix. It is
// immutable once built.
type ruleSet struct {
	rules  []Rule // longest prefix first
	minLen int    // shortest prefix, for a quick reject
}

func newRuleSet(rules []Rule) (*ruleSet, error) {
	if err := ValidateRules(rules); err != nil {
		return nil, err
	}
	rs := &ruleSet{rules: append([]Rule(nil), rules...)}
	for _, r := range rs.rules {
		if rs.minLen == 0 || len(r.Prefix) < rs.minLen {
			rs.minLen = len(r.Prefix)
		}
	}
	sort.SliceStable(rs.rules, func(a, b int) bool { return len(rs.rules[a].Prefix) > len(rs.rules[b].Prefix) })
	return rs, nil
}

// match returns the rule for key, or nil. Keys longer than maxSplitKey are
// never split: their sub-keys would not fit memcached's key limit.
func (rs *ruleSet) match(key []byte) *Rule {
	if rs == nil || len(key) < rs.minLen || len(key) > maxSplitKey {
		return nil
	}
	for i := range rs.rules {
		r := &rs.rules[i]
		if len(key) >= len(r.Prefix) && string(key[:len(r.Prefix)]) == r.Prefix {
			return r
		}
	}
	return nil
}
