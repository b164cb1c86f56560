package keyrule

import (
	"bytes"
	"testing"
)

// FuzzMatch checks, for any key, what Match promises: a μ-shard's field is
// a non-empty part of the key, the key starts with its rule's prefix, no
// longer prefix claims it, and its name splits back into prefix and field.
func FuzzMatch(f *testing.F) {
	// A delimiter key, its nested rule, and an empty field.
	f.Add([]byte("u:42:profile"))
	f.Add([]byte("u:team:7:x"))
	f.Add([]byte("u::"))
	// Tags: a plain one, an empty one, an unclosed one, braces reversed.
	f.Add([]byte("g:{abc}"))
	f.Add([]byte("g:{}"))
	f.Add([]byte("g:{abc"))
	f.Add([]byte("g:}{"))
	// The regex rule, matched and not; a multi-byte delimiter.
	f.Add([]byte("s/123/x"))
	f.Add([]byte("s//x"))
	f.Add([]byte("m::a::b::c"))
	// Nothing, and bytes memcached's text protocol would refuse.
	f.Add([]byte(""))
	f.Add([]byte("u:\x00 \xff:"))
	rs := mustNew(f,
		Rule{Prefix: "u:", Delimiter: ":", Field: 1},
		Rule{Prefix: "u:team:", Delimiter: ":", Field: 2},
		Rule{Prefix: "g:", Tag: true},
		Rule{Prefix: "s/", Regex: `^s/([0-9]*)/`},
		Rule{Prefix: "m", Delimiter: "::", Field: 3},
	)
	f.Fuzz(func(t *testing.T, key []byte) {
		id := rs.Match(key)
		if !id.Ok() {
			if id.Field != nil {
				t.Fatalf("no μ-shard with a field %q", id.Field)
			}
			return
		}
		if len(id.Field) == 0 || !bytes.Contains(key, id.Field) {
			t.Fatalf("field %q is not a non-empty part of %q", id.Field, key)
		}
		r := rs.Rule(id.Rule)
		if !bytes.HasPrefix(key, []byte(r.Prefix)) {
			t.Fatalf("rule %q claimed %q", r.Prefix, key)
		}
		for i := 0; i < rs.Len(); i++ {
			p := rs.Rule(i).Prefix
			if len(p) > len(r.Prefix) && bytes.HasPrefix(key, []byte(p)) {
				t.Fatalf("rule %q claimed %q over the longer %q", r.Prefix, key, p)
			}
		}
		p, fld, ok := SplitName(rs.Name(id))
		if !ok || p != r.Prefix || fld != string(id.Field) {
			t.Fatalf("name %q splits into (%q, %q, %v)", rs.Name(id), p, fld, ok)
		}
		if again := rs.Match(key); again.Rule != id.Rule || !bytes.Equal(again.Field, id.Field) {
			t.Fatalf("two matches of %q differ", key)
		}
	})
}
