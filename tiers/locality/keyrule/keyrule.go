package keyrule

import (
	"bytes"
	"regexp"
	"sort"

	"github.com/cespare/xxhash/v2"
)

// NoRule is ID.Rule for a key no rule gives a μ-shard.
const NoRule = -1

// ID names a key's μ-shard.
//
// Invariant: Rule == NoRule and Field == nil, or Rule indexes the Rules it
// came from and Field is a non-empty sub-slice of the key passed to Match.
type ID struct {
	Rule  int
	Field []byte
}

// Ok reports whether the key had a μ-shard.
func (id ID) Ok() bool { return id.Rule != NoRule }

// compiled is one rule ready to match.
type compiled struct {
	Rule
	kind   Kind
	prefix []byte
	delim  []byte
	re     *regexp.Regexp
}

// Rules matches keys against a validated Config.
type Rules struct {
	// rules are in Config order: ID.Rule indexes them.
	rules []compiled
	// order lists rule indexes by prefix length, longest first, so the
	// first prefix that matches is the longest.
	order []int
}

// New validates cfg and compiles its rules.
func New(cfg Config) (*Rules, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rs := &Rules{rules: make([]compiled, len(cfg.Rules)), order: make([]int, len(cfg.Rules))}
	for i, r := range cfg.Rules {
		c := compiled{Rule: r, kind: r.Kind(), prefix: []byte(r.Prefix), delim: []byte(r.Delimiter)}
		if c.kind == KindRegex {
			c.re = regexp.MustCompile(r.Regex) // validate compiled it already
		}
		rs.rules[i] = c
		rs.order[i] = i
	}
	sort.SliceStable(rs.order, func(a, b int) bool {
		return len(rs.rules[rs.order[a]].prefix) > len(rs.rules[rs.order[b]].prefix)
	})
	return rs, nil
}

// Len is the number of rules.
func (rs *Rules) Len() int { return len(rs.rules) }

// Rule returns rule i as configured.
func (rs *Rules) Rule(i int) Rule { return rs.rules[i].Rule }

// Match returns key's μ-shard, or an ID with Rule NoRule. The ID borrows
// key (see the package doc). It does not allocate except on regex rules.
func (rs *Rules) Match(key []byte) ID {
	for _, i := range rs.order {
		r := &rs.rules[i]
		if !bytes.HasPrefix(key, r.prefix) {
			continue
		}
		var f []byte
		switch r.kind {
		case KindTag:
			f = tag(key[len(r.prefix):])
		case KindDelimiter:
			f = field(key, r.delim, r.Field)
		case KindRegex:
			// One allocation: regexp has no form that fills our slice.
			if m := r.re.FindSubmatchIndex(key); m != nil && m[2] >= 0 {
				f = key[m[2]:m[3]:m[3]]
			}
		}
		if len(f) == 0 {
			return ID{Rule: NoRule}
		}
		return ID{Rule: i, Field: f}
	}
	return ID{Rule: NoRule}
}

// tag returns the bytes between the first '{' of b and the next '}', or
// nil.
func tag(b []byte) []byte {
	open := bytes.IndexByte(b, '{')
	if open < 0 {
		return nil
	}
	rest := b[open+1:]
	end := bytes.IndexByte(rest, '}')
	if end < 0 {
		return nil
	}
	return rest[:end:end]
}

// field returns field n (from 0) of key split on delim, or nil.
func field(key, delim []byte, n int) []byte {
	for ; n > 0; n-- {
		i := bytes.Index(key, delim)
		if i < 0 {
			return nil
		}
		key = key[i+len(delim):]
	}
	if i := bytes.Index(key, delim); i >= 0 {
		key = key[:i]
	}
	return key[:len(key):len(key)]
}

// Hash is a 64-bit hash of id for per-loop caches. Equal ids hash equally;
// a cache must still compare the ids, since distinct ones can collide.
func (rs *Rules) Hash(id ID) uint64 {
	// Mixing the rule in keeps equal fields of two rules apart.
	return xxhash.Sum64(id.Field) ^ (uint64(id.Rule+1) * 0x9e3779b97f4a7c15)
}

// AppendName appends id's name, prefix + " " + field, to dst. It is the
// μ-shard's name in the control store and the admin API. id must be Ok.
func (rs *Rules) AppendName(dst []byte, id ID) []byte {
	dst = append(dst, rs.rules[id.Rule].prefix...)
	dst = append(dst, ' ')
	return append(dst, id.Field...)
}

// Name is AppendName into a new string.
func (rs *Rules) Name(id ID) string { return string(rs.AppendName(nil, id)) }

// SplitName splits a μ-shard name into its rule's prefix and its field. It
// reports false for a string no rule could have named (no space, or an
// empty field); it does not check that the prefix is configured, since
// names outlive configurations in the store.
func SplitName(name string) (prefix, field string, ok bool) {
	for i := 0; i < len(name); i++ {
		if name[i] == ' ' {
			if i+1 == len(name) {
				return "", "", false
			}
			return name[:i], name[i+1:], true
		}
	}
	return "", "", false
}
