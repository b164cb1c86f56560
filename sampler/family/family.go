package family

import (
	"fmt"
	"regexp"
)

// Rule assigns Family to every key that Match matches. Family may refer to
// capture groups of Match as $1 or ${name} (regexp.Expand syntax), so one
// rule can keep a meaningful part of the key: Match `^(\w+):session:` with
// Family "$1:session:*".
type Rule struct {
	Match  string // a regular expression (RE2 syntax), matched anywhere in the key unless anchored
	Family string // the family name, with optional $n expansions
}

type compiled struct {
	re       *regexp.Regexp
	template []byte
}

// Normalizer turns keys into family names.
type Normalizer struct {
	rules []compiled
}

// New compiles rules. An invalid pattern or an empty Family is an error
// naming the rule's index.
func New(rules []Rule) (*Normalizer, error) {
	n := &Normalizer{}
	for i, r := range rules {
		if r.Family == "" {
			return nil, fmt.Errorf("family rule %d (%q): empty family", i, r.Match)
		}
		re, err := regexp.Compile(r.Match)
		if err != nil {
			return nil, fmt.Errorf("family rule %d: %w", i, err)
		}
		n.rules = append(n.rules, compiled{re: re, template: []byte(r.Family)})
	}
	return n, nil
}

// Family returns the family of key: the first matching rule's, or the
// default normalisation.
func (n *Normalizer) Family(key []byte) string {
	for _, r := range n.rules {
		if m := r.re.FindSubmatchIndex(key); m != nil {
			return string(r.re.Expand(nil, r.template, key, m))
		}
	}
	return string(AppendDefault(make([]byte, 0, len(key)+8), key))
}

const (
	placeholderN = "{N}"
	placeholderH = "{H}"
	minHexWord   = 8
)

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isHexAlpha(c byte) bool { return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') }
func isHex(c byte) bool      { return isDigit(c) || isHexAlpha(c) }
func isWord(c byte) bool     { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') }

// AppendDefault appends the default normalisation of key to dst (see the
// package comment for the exact rules).
func AppendDefault(dst, key []byte) []byte {
	i := 0
	for i < len(key) {
		c := key[i]
		if !isWord(c) {
			dst = append(dst, c)
			i++
			continue
		}
		// i starts a word (the byte before it, if any, is not a word byte).
		if uuidAt(key, i) {
			dst = append(dst, placeholderH...)
			i += 36
			continue
		}
		j := i
		hexOnly, digits, letters := true, false, false
		for j < len(key) && isWord(key[j]) {
			switch {
			case isDigit(key[j]):
				digits = true
			case isHexAlpha(key[j]):
				letters = true
			default:
				hexOnly = false
			}
			j++
		}
		if hexOnly && digits && letters && j-i >= minHexWord {
			dst = append(dst, placeholderH...)
			i = j
			continue
		}
		for i < j {
			if isDigit(key[i]) {
				for i < j && isDigit(key[i]) {
					i++
				}
				dst = append(dst, placeholderN...)
				continue
			}
			dst = append(dst, key[i])
			i++
		}
	}
	return dst
}

// uuidAt reports whether key[i:] starts with a canonical 8-4-4-4-12 UUID
// that is not followed by another word byte.
func uuidAt(key []byte, i int) bool {
	if len(key)-i < 36 {
		return false
	}
	for k := 0; k < 36; k++ {
		c := key[i+k]
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return i+36 == len(key) || !isWord(key[i+36])
}
