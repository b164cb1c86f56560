package keyrule

import (
	"errors"
	"strings"
	"testing"
)

func mustNew(t testing.TB, rules ...Rule) *Rules {
	t.Helper()
	rs, err := New(Config{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestMatch(t *testing.T) {
	rs := mustNew(t,
		Rule{Prefix: "u:", Delimiter: ":", Field: 1},
		Rule{Prefix: "g:", Tag: true},
		Rule{Prefix: "u:team:", Delimiter: ":", Field: 2}, // longer than "u:": wins
		Rule{Prefix: "s/", Regex: `^s/sess-([0-9a-f]+)/`},
		Rule{Prefix: "m", Delimiter: "::", Field: 2},
	)
	cases := []struct {
		key, name string // name "" = no μ-shard
	}{
		{"u:42:profile", "u: 42"},
		{"u:42", "u: 42"},
		{"u:", ""},      // field 1 is missing
		{"u::x", ""},    // field 1 is empty
		{"user:42", ""}, // no prefix claims it
		{"u:team:7:members", "u:team: 7"},
		{"u:team:", ""}, // the longest prefix claims it and finds nothing; "u:" is not tried
		{"g:{abc}:feed", "g: abc"},
		{"g:x{a}{b}", "g: a"},
		{"g:{}", ""},
		{"g:{abc", ""},
		{"{abc}g:", ""},    // the tag must follow the prefix
		{"g:}{x}", "g: x"}, // a '}' before the first '{' is ignored
		{"s/sess-00ff/data", "s/ 00ff"},
		{"s/sess-/data", ""},
		{"s/other", ""},
		{"ma::b::c::d", "m c"},
		{"ma::b", ""},
		{"", ""},
	}
	for _, c := range cases {
		id := rs.Match([]byte(c.key))
		got := ""
		if id.Ok() {
			got = rs.Name(id)
		} else if id.Field != nil {
			t.Errorf("%q: no μ-shard but field %q", c.key, id.Field)
		}
		if got != c.name {
			t.Errorf("%q: name %q, want %q", c.key, got, c.name)
		}
	}
}

func TestNoRules(t *testing.T) {
	rs := mustNew(t)
	if id := rs.Match([]byte("u:1")); id.Ok() {
		t.Fatalf("no rules matched: %+v", id)
	}
}

func TestEmptyPrefixClaimsTheRest(t *testing.T) {
	rs := mustNew(t, Rule{Prefix: "", Tag: true}, Rule{Prefix: "u:", Delimiter: ":", Field: 1})
	if got := rs.Name(rs.Match([]byte("x{7}"))); got != " 7" {
		t.Fatalf("catch-all: %q", got)
	}
	if got := rs.Name(rs.Match([]byte("u:{7}:9"))); got != "u: {7}" {
		t.Fatalf("the longer prefix wins: %q", got)
	}
}

func TestValidate(t *testing.T) {
	bad := []struct {
		rules []Rule
		field string // the refused field
		want  string
	}{
		{[]Rule{{Prefix: "u:"}}, "Rules[0]", "exactly one"},
		{[]Rule{{Prefix: "u:", Tag: true, Delimiter: ":"}}, "Rules[0]", "exactly one"},
		{[]Rule{{Prefix: "u:", Tag: true, Regex: "(x)"}}, "Rules[0]", "exactly one"},
		{[]Rule{{Prefix: "u:", Tag: true}, {Prefix: "u:", Tag: true}}, "Rules[1].Prefix", "already used by rule 0"},
		{[]Rule{{Prefix: "u :", Tag: true}}, "Rules[0].Prefix", "space or control"},
		{[]Rule{{Prefix: "u\n", Tag: true}}, "Rules[0].Prefix", "space or control"},
		{[]Rule{{Prefix: "u:", Delimiter: ":", Field: -1}}, "Rules[0].Field", "-1 is out of range"},
		{[]Rule{{Prefix: "u:", Delimiter: ":", Field: MaxField + 1}}, "Rules[0].Field", "251 is out of range"},
		{[]Rule{{Prefix: "u:", Tag: true, Field: 1}}, "Rules[0].Field", "field goes with delimiter"},
		{[]Rule{{Prefix: "u:", Regex: "(a)", Field: 1}}, "Rules[0].Field", "field goes with delimiter"},
		{[]Rule{{Prefix: "u:", Regex: "u:[0-9]+"}}, "Rules[0].Regex", "0 capture groups"},
		{[]Rule{{Prefix: "u:", Regex: "(u):([0-9]+)"}}, "Rules[0].Regex", "2 capture groups"},
		{[]Rule{{Prefix: "u:", Regex: "u:(["}}, "Rules[0].Regex", "missing closing ]"},
	}
	for _, b := range bad {
		_, err := New(Config{Rules: b.rules})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != b.field || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: error %v, want one at %s containing %q", b.rules, err, b.field, b.want)
		}
	}
	// Every bad rule is reported, each at its own index.
	err := Config{Rules: []Rule{{Prefix: "a"}, {Prefix: "b", Tag: true}, {Prefix: "b", Tag: true}}}.Validate()
	for _, want := range []string{"Rules[0]: set exactly one", "Rules[2].Prefix: \"b\" is given twice"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
}

func TestHashSeparatesRules(t *testing.T) {
	rs := mustNew(t, Rule{Prefix: "a:", Tag: true}, Rule{Prefix: "b:", Tag: true})
	a, b := rs.Match([]byte("a:{x}")), rs.Match([]byte("b:{x}"))
	if rs.Hash(a) == rs.Hash(b) {
		t.Fatal("equal fields of two rules hash equally")
	}
	if rs.Hash(a) != rs.Hash(rs.Match([]byte("a:{x}:other"))) {
		t.Fatal("one μ-shard, two hashes")
	}
}

func TestSplitName(t *testing.T) {
	cases := []struct {
		name, prefix, field string
		ok                  bool
	}{
		{"u: 42", "u:", "42", true},
		{" 42", "", "42", true},
		{"u: a b", "u:", "a b", true}, // the field may hold spaces (meta keys)
		{"u:", "", "", false},
		{"u: ", "", "", false},
	}
	for _, c := range cases {
		p, f, ok := SplitName(c.name)
		if p != c.prefix || f != c.field || ok != c.ok {
			t.Errorf("%q: (%q, %q, %v), want (%q, %q, %v)", c.name, p, f, ok, c.prefix, c.field, c.ok)
		}
	}
}
