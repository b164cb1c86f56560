package configfile

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// Schema is the set of keys a configuration struct defines, read from
// its `toml` tags. It is immutable, so one Schema serves every Decode.
type Schema struct {
	// known is every key path, with the elements of an array of tables
	// unindexed ("promotion.rule.prefix").
	known map[string]bool
	// opaque are the known keys whose type decodes itself (a
	// toml.Unmarshaler): the decoder counts everything below them as
	// decoded, and what is below is the type's to check.
	opaque []string
}

var unmarshalerType = reflect.TypeFor[toml.Unmarshaler]()

// SchemaOf reads the keys of v, a struct or a pointer to one. Embedded
// structs add their keys to the enclosing table; a field without a toml
// tag is no key. It panics when v is not a struct: that is a programming
// error, found by the first test.
func SchemaOf(v any) *Schema {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("configfile: schema of a %s, not a struct", t))
	}
	s := &Schema{known: map[string]bool{}}
	s.walk("", t)
	sort.Strings(s.opaque)
	return s
}

func (s *Schema) walk(prefix string, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			s.walk(prefix, f.Type)
			continue
		}
		name := f.Tag.Get("toml")
		if name == "" {
			continue
		}
		key := prefix + name
		s.known[key] = true
		ft := f.Type
		if ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if reflect.PointerTo(ft).Implements(unmarshalerType) {
			s.opaque = append(s.opaque, key)
			continue
		}
		if ft.Kind() == reflect.Struct {
			s.walk(key+".", ft)
		}
	}
}

// Known reports whether key (unindexed, "promotion.rule.prefix") is one
// of the schema's.
func (s *Schema) Known(key string) bool { return s.known[key] }

// Keys is every key of the schema, sorted.
func (s *Schema) Keys() []string {
	keys := make([]string, 0, len(s.known))
	for k := range s.known {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// belowOpaque reports whether key lies inside a value that decodes itself.
func (s *Schema) belowOpaque(key string) bool {
	for _, o := range s.opaque {
		if strings.HasPrefix(key, o+".") {
			return true
		}
	}
	return false
}

// suggest names a known key close to a misspelt one: a sibling when the
// key's table exists, else any key of the schema. It returns "" when no
// key is within an edit distance of 2.
func (s *Schema) suggest(key string) string {
	parent, leaf := "", key
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		parent, leaf = key[:i+1], key[i+1:]
	}
	best, bestD := "", 3
	for known := range s.known {
		cand, against := known, key
		if parent != "" && s.known[strings.TrimSuffix(parent, ".")] {
			if !strings.HasPrefix(known, parent) || strings.Contains(known[len(parent):], ".") {
				continue
			}
			cand, against = known[len(parent):], leaf
		}
		if abs(len(against)-len(cand)) >= bestD {
			continue // the distance is at least that: spares a long key's quadratic cost
		}
		if d := editDistance(against, cand); d < bestD || (d == bestD && cand < best) {
			best, bestD = cand, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
