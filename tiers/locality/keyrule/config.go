package keyrule

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// MaxField bounds Rule.Field: memcached keys are at most 250 bytes, so no
// key holds more fields than that.
const MaxField = 250

// Rule is one [[locality.rule]] of the configuration. Exactly one of Tag,
// Delimiter (with Field) or Regex is set.
type Rule struct {
	// Prefix selects the keys the rule claims. It may be empty (the rule
	// then claims every key no longer prefix claims); it holds no space or
	// control byte, since memcached keys cannot.
	Prefix string
	// Tag takes the field from a hash tag, "{...}", after the prefix.
	Tag bool
	// Delimiter splits the whole key; Field (from 0) is the field taken.
	Delimiter string
	Field     int
	// Regex is matched against the whole key; its one capture group is
	// the field.
	Regex string
}

// Kind is how a rule extracts its field.
type Kind uint8

// The three kinds of rule.
const (
	KindTag Kind = iota + 1
	KindDelimiter
	KindRegex
)

var kindNames = [...]string{KindTag: "tag", KindDelimiter: "delimiter", KindRegex: "regex"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Kind reports which extraction r configures, or 0 when it sets none or
// several (validate rejects that).
func (r Rule) Kind() Kind {
	var k Kind
	n := 0
	if r.Tag {
		k, n = KindTag, n+1
	}
	if r.Delimiter != "" {
		k, n = KindDelimiter, n+1
	}
	if r.Regex != "" {
		k, n = KindRegex, n+1
	}
	if n != 1 {
		return 0
	}
	return k
}

// Config is the locality rules. The zero Config has no rules: every key is
// served locally.
type Config struct {
	Rules []Rule
}

// FieldError is a refused value of one field of Config, named by its Go
// path: "Rules[2].Regex", or "Rules[2]" for the rule as a whole.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "keyrule: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

// validate is Validate; New calls it.
func (c *Config) validate() error { return c.Validate() }

// Validate rejects rules that could not extract a field, or that make
// names ambiguous: the first problem of each rule, as a *FieldError
// (several are joined). It fills nothing: a rule has no defaults.
func (c Config) Validate() error {
	var errs []error
	seen := make(map[string]int, len(c.Rules))
	for i, r := range c.Rules {
		if field, err := r.check(i, seen); err != nil {
			errs = append(errs, &FieldError{Field: fmt.Sprintf("Rules[%d]%s", i, field), Err: err})
		}
	}
	return errors.Join(errs...)
}

// check reports the first problem of rule i and the field it is in (""
// for the rule as a whole, else ".Name"); seen holds the prefixes of the
// rules before it, and gets r's.
func (r Rule) check(i int, seen map[string]int) (string, error) {
	if j, dup := seen[r.Prefix]; dup {
		return ".Prefix", fmt.Errorf("%q is given twice (already used by rule %d)", r.Prefix, j)
	}
	seen[r.Prefix] = i
	if strings.IndexFunc(r.Prefix, func(c rune) bool { return c <= ' ' || c == 0x7f }) >= 0 {
		return ".Prefix", fmt.Errorf("prefix %q holds a space or control byte: memcached keys cannot", r.Prefix)
	}
	switch r.Kind() {
	case KindTag:
		if r.Field != 0 {
			return ".Field", errors.New("field goes with delimiter")
		}
	case KindDelimiter:
		if r.Field < 0 || r.Field > MaxField {
			return ".Field", fmt.Errorf("%d is out of range: 0 to %d", r.Field, MaxField)
		}
	case KindRegex:
		if r.Field != 0 {
			return ".Field", errors.New("field goes with delimiter")
		}
		re, err := regexp.Compile(r.Regex)
		if err != nil {
			return ".Regex", err
		}
		if n := re.NumSubexp(); n != 1 {
			return ".Regex", fmt.Errorf("%q has %d capture groups: want exactly one, the μ-shard's field", r.Regex, n)
		}
	default:
		return "", errors.New("set exactly one of tag = true, delimiter (with field) or regex")
	}
	return "", nil
}
