package hotkeys

import (
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
}

// Defaults of Config.
const (
	DefaultRate     = 1000
	DefaultHold     = 60 * time.Second
	DefaultHalfLife = 5 * time.Second
	DefaultCounters = 512
	DefaultSample   = 4
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
	// Now is the time in nanoseconds. The detector and the marks take time
	// only from it. Default: the system clock.
	Now func() int64
}

func (c *Config) validate() error {
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Rate < 0 {
		return fmt.Errorf("rate %v: must be positive", c.Rate)
	}
	if c.Hold == 0 {
		c.Hold = DefaultHold
	}
	if c.Hold < time.Second {
		return fmt.Errorf("hold %v: must be at least 1s", c.Hold)
	}
	if c.HalfLife == 0 {
		c.HalfLife = DefaultHalfLife
	}
	if c.HalfLife < 100*time.Millisecond {
		return fmt.Errorf("half life %v: must be at least 100ms", c.HalfLife)
	}
	if c.Counters == 0 {
		c.Counters = DefaultCounters
	}
	if c.Counters < 8 || c.Counters > 1<<16 {
		return fmt.Errorf("counters %d: must be 8 to 65536", c.Counters)
	}
	if c.Sample == 0 {
		c.Sample = DefaultSample
	}
	if c.Sample < 1 || c.Sample > 1<<20 {
		return fmt.Errorf("sample %d: must be 1 to 1048576", c.Sample)
	}
	if c.L1MaxTTL == 0 {
		c.L1MaxTTL = 60 * time.Second
	}
	if c.L1MaxTTL < time.Second {
		return fmt.Errorf("l1 max ttl %v: must be at least 1s", c.L1MaxTTL)
	}
	if c.Now == nil {
		c.Now = func() int64 { return time.Now().UnixNano() }
	}
	_, err := newRuleSet(c.Rules)
	return err
}

// ValidateRules checks rules as New would, for a reload.
func ValidateRules(rules []Rule) error {
	_, err := newRuleSet(rules)
	return err
}

// ruleSet finds the rule of a key: the longest matching prefix. It is
// immutable once built.
type ruleSet struct {
	rules  []Rule // longest prefix first
	minLen int    // shortest prefix, for a quick reject
}

func newRuleSet(rules []Rule) (*ruleSet, error) {
	rs := &ruleSet{rules: append([]Rule(nil), rules...)}
	seen := map[string]bool{}
	for i, r := range rs.rules {
		if r.Prefix == "" {
			return nil, fmt.Errorf("rule %d: prefix is required (a rule for every key would split them all)", i)
		}
		if strings.ContainsAny(r.Prefix, " \t\r\n") {
			return nil, fmt.Errorf("rule %d: prefix %q: keys have no whitespace", i, r.Prefix)
		}
		if seen[r.Prefix] {
			return nil, fmt.Errorf("rule %d: prefix %q appears twice", i, r.Prefix)
		}
		seen[r.Prefix] = true
		if r.Kind < KindCounter || r.Kind > KindRead {
			return nil, fmt.Errorf("rule %d (%q): kind must be counter, list or read", i, r.Prefix)
		}
		if r.Split < 2 || r.Split > MaxSplit {
			return nil, fmt.Errorf("rule %d (%q): split %d: must be 2 to %d", i, r.Prefix, r.Split, MaxSplit)
		}
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
