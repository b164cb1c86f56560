package keyrule

import (
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

// validate rejects rules that could not extract a field, or that make
// names ambiguous. It fills nothing: a rule has no defaults.
func (c *Config) validate() error {
	seen := make(map[string]int, len(c.Rules))
	for i, r := range c.Rules {
		if j, dup := seen[r.Prefix]; dup {
			return fmt.Errorf("rule %d: prefix %q already used by rule %d", i, r.Prefix, j)
		}
		seen[r.Prefix] = i
		if strings.IndexFunc(r.Prefix, func(c rune) bool { return c <= ' ' || c == 0x7f }) >= 0 {
			return fmt.Errorf("rule %d: prefix %q holds a space or control byte", i, r.Prefix)
		}
		switch r.Kind() {
		case KindTag:
			if r.Field != 0 {
				return fmt.Errorf("rule %d (prefix %q): field is for delimiter rules", i, r.Prefix)
			}
		case KindDelimiter:
			if r.Field < 0 || r.Field > MaxField {
				return fmt.Errorf("rule %d (prefix %q): field %d: must be 0 to %d", i, r.Prefix, r.Field, MaxField)
			}
		case KindRegex:
			if r.Field != 0 {
				return fmt.Errorf("rule %d (prefix %q): field is for delimiter rules", i, r.Prefix)
			}
			re, err := regexp.Compile(r.Regex)
			if err != nil {
				return fmt.Errorf("rule %d (prefix %q): regex: %w", i, r.Prefix, err)
			}
			if n := re.NumSubexp(); n != 1 {
				return fmt.Errorf("rule %d (prefix %q): regex %q has %d capture groups, want exactly 1", i, r.Prefix, r.Regex, n)
			}
		default:
			return fmt.Errorf("rule %d (prefix %q): set exactly one of tag, delimiter or regex", i, r.Prefix)
		}
	}
	return nil
}
