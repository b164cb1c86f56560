package promote

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Rule sets the threshold for keys that start with Prefix.
type Rule struct {
	Prefix    string `json:"prefix"`
	Threshold uint32 `json:"threshold"`
}

// Policy is an immutable promotion policy. Replace it whole to tune it live.
type Policy struct {
	threshold uint32
	rules     []Rule // sorted by descending prefix length: the longest match wins
}

// Bounds of a threshold: 1 promotes every L2 hit, 2^31 almost none.
const (
	MinThreshold = 1
	MaxThreshold = 1 << 31
)

// CheckThreshold reports whether n is a valid threshold. It takes an int64
// so that a configuration can check a value before narrowing it to
// uint32.
func CheckThreshold(n int64) error {
	if n < MinThreshold || n > MaxThreshold {
		return fmt.Errorf("%d is out of range: %d (promote every L2 hit) to %d", n, MinThreshold, int64(MaxThreshold))
	}
	return nil
}

// FieldError is a refused value of one part of a policy. Field names it as
// the fields of a configuration holding a policy do (layered.Config):
// "Threshold", or "Rules[i].Prefix" and "Rules[i].Threshold" for the i-th
// rule.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "promote: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// Validate reports every refused value of a policy: a threshold out of
// range, a rule with an empty prefix, a prefix given twice. Each is a
// *FieldError; several are joined with errors.Join.
func Validate(threshold uint32, rules []Rule) error {
	var errs []error
	refuse := func(field string, err error) { errs = append(errs, &FieldError{Field: field, Err: err}) }
	if err := CheckThreshold(int64(threshold)); err != nil {
		refuse("Threshold", err)
	}
	seen := make(map[string]bool, len(rules))
	for i, r := range rules {
		switch {
		case r.Prefix == "":
			refuse(fmt.Sprintf("Rules[%d].Prefix", i), errors.New("every rule needs a non-empty prefix"))
			continue
		case seen[r.Prefix]:
			refuse(fmt.Sprintf("Rules[%d].Prefix", i), fmt.Errorf("%q is given twice", r.Prefix))
			continue
		}
		seen[r.Prefix] = true
		if err := CheckThreshold(int64(r.Threshold)); err != nil {
			refuse(fmt.Sprintf("Rules[%d].Threshold", i), err)
		}
	}
	return errors.Join(errs...)
}

// NewPolicy validates (see Validate) and builds a policy. threshold 1
// promotes every L2 hit.
func NewPolicy(threshold uint32, rules []Rule) (*Policy, error) {
	if err := Validate(threshold, rules); err != nil {
		return nil, err
	}
	rs := make([]Rule, len(rules))
	copy(rs, rules)
	sort.SliceStable(rs, func(i, j int) bool { return len(rs[i].Prefix) > len(rs[j].Prefix) })
	return &Policy{threshold: threshold, rules: rs}, nil
}

// Threshold returns the global N.
func (p *Policy) Threshold() uint32 { return p.threshold }

// Rules returns a copy of the prefix rules, longest prefix first.
func (p *Policy) Rules() []Rule { return append([]Rule(nil), p.rules...) }

// ThresholdFor returns the N that applies to key.
func (p *Policy) ThresholdFor(key []byte) uint32 {
	for i := range p.rules {
		if hasPrefix(key, p.rules[i].Prefix) {
			return p.rules[i].Threshold
		}
	}
	return p.threshold
}

func hasPrefix(key []byte, prefix string) bool {
	return len(key) >= len(prefix) && string(key[:len(prefix)]) == prefix
}

// Decide reports whether an L2 hit on key is promoted, given r drawn
// uniformly from [0, 2^64). It is true with probability exactly 1/N for N a
// power of two, and within 2^-64 of it otherwise.
func (p *Policy) Decide(key []byte, r uint64) bool {
	n := p.ThresholdFor(key)
	if n == 1 {
		return true
	}
	return r < math.MaxUint64/uint64(n)+1
}

// Probability is the model: the chance that a key read k times from L2 has
// been promoted at least once with threshold n, 1 − (1 − 1/n)^k. n ≤ 1
// promotes on the first trial; k ≤ 0 never promotes. This is the one home of
// the formula: the sampler's report and the admin page call it too.
func Probability(n uint32, k int) float64 {
	if k <= 0 {
		return 0
	}
	if n <= 1 {
		return 1
	}
	return ProbabilityRate(1/float64(n), k)
}

// ProbabilityRate is Probability for a per-trial promotion rate p in [0, 1],
// e.g. a rate observed as promotions ÷ L2 hits.
func ProbabilityRate(p float64, k int) float64 {
	if k <= 0 || p <= 0 {
		return 0
	}
	if p >= 1 {
		return 1
	}
	// Log1p/Expm1 keep precision for large N, where 1 − 1/N rounds.
	return -math.Expm1(float64(k) * math.Log1p(-p))
}

// String renders the policy for logs, e.g. "N=32 photos:=64".
func (p *Policy) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "N=%d", p.threshold)
	for _, r := range p.rules {
		fmt.Fprintf(&b, " %s=%d", r.Prefix, r.Threshold)
	}
	return b.String()
}
