package confimport

import (
	"errors"
	"strings"
	"testing"
)

const mcSample = `{
  // two pools; every key reaches "main"
  "pools": {
    "main": { "servers": ["10.0.0.1:11211", "10.0.0.2:11211:ascii", "[::1]:11213"] },
    "gutter": { "servers": ["10.0.1.1:11211"] }
  },
  /* failover to the gutter pool */
  "route": {
    "type": "FailoverRoute",
    "children": [
      { "type": "PrefixSelectorRoute",
        "policies": { "a:": "PoolRoute|main", "b:": { "type": "HashRoute", "children": "Pool|main", "hash_func": "Ch3" } },
        "wildcard": { "type": "PoolRoute", "pool": "main", "hash": { "hash_func": "Ch3" } } },
      "PoolRoute|gutter"
    ]
  }
}`

func TestMcrouterTranslatesOnePoolRoutes(t *testing.T) {
	out, err := Mcrouter("mcrouter.json", []byte(mcSample))
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, out)
	if got.L1.Kind != "none" || got.L2.Compat != "mcrouter-ch3" ||
		strings.Join(got.L2.Servers, ",") != "10.0.0.1:11211,10.0.0.2:11211,[::1]:11213" {
		t.Fatalf("translation: %+v\n%s", got, out)
	}
	for _, want := range []string{"FailoverRoute", "tried the other 1", "every prefix leads to pool \"main\""} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %q:\n%s", want, out)
		}
	}
	out, err = Mcrouter("m.json", []byte(`{"pools": {"p": {"servers": ["10.0.0.1:1"]}}, "routes": [{"aliases": ["/a/b/"], "route": {"type": "PoolRoute", "pool": "p", "hash": "Crc32"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := decode(t, out); got.L2.Compat != "mcrouter-crc32" {
		t.Fatalf("crc32: %+v\n%s", got, out)
	}
}

func TestMcrouterErrorsNameTheJSONPath(t *testing.T) {
	pools := `"pools": {"a": {"servers": ["10.0.0.1:1"]}, "b": {"servers": ["10.0.0.2:1"]}}`
	for _, c := range []struct{ name, json, want string }{
		{"two pools", `{` + pools + `, "route": {"type": "PrefixSelectorRoute", "policies": {"x": "PoolRoute|a"}, "wildcard": "PoolRoute|b"}}`,
			`m.json: $.route.policies.x: leads to pool "a" (ch3), but $.route.wildcard leads to "b"`},
		{"two hashes", `{` + pools + `, "route": {"type": "PrefixSelectorRoute", "policies": {"x": {"type": "PoolRoute", "pool": "a", "hash": "Crc32"}}, "wildcard": "PoolRoute|a"}}`,
			`m.json: $.route.policies.x: leads to pool "a" (crc32)`},
		{"warm up", `{` + pools + `, "route": {"type": "WarmUpRoute", "cold": "PoolRoute|a", "warm": "PoolRoute|b"}}`,
			`m.json: $.route: route type "WarmUpRoute" is not translated`},
		{"all sync", `{` + pools + `, "route": "AllSyncRoute|a"}`, `m.json: $.route: route "AllSyncRoute|a" is not translated`},
		{"salted", `{` + pools + `, "route": {"type": "PoolRoute", "pool": "a", "hash": {"hash_func": "Ch3", "salt": "x"}}}`, `m.json: $.route.hash.salt: not translated`},
		{"weighted", `{` + pools + `, "route": {"type": "PoolRoute", "pool": "a", "hash": "WeightedCh3"}}`, `m.json: $.route.hash: hash function WeightedCh3`},
		{"no pool", `{` + pools + `, "route": "PoolRoute|c"}`, `m.json: $.route: no pool "c"`},
		{"ssl server", `{"pools": {"a": {"servers": ["10.0.0.1:1:ascii:ssl"]}}, "route": "PoolRoute|a"}`, `m.json: $.pools.a.servers[0]: `},
		{"macros", `{"macros": {}, ` + pools + `, "route": "PoolRoute|a"}`, `m.json: $.macros: macros are not expanded`},
		{"syntax", "{\n  \"pools\": {,\n}", `m.json:2: (json): `},
	} {
		_, err := Mcrouter("m.json", []byte(c.json))
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q…", c.name, err, c.want)
		}
	}
}

// FuzzMcrouter: any input is refused with a placed error or translated into
// TOML that decodes and names an mcrouter layout over at least one server.
func FuzzMcrouter(f *testing.F) {
	f.Add(mcSample)                                                                // comments, failover, prefix selector, hash routes
	f.Add(`{"pools": {"p": {"servers": ["10.0.0.1:1"]}}, "route": "PoolRoute|p"}`) // the least
	f.Add(`{"pools": {}, "routes": []}`)                                           // nothing to route
	f.Add(`/* unterminated`)                                                       // a comment that never ends
	f.Add(`{"pools": {"p": {"servers": ["a:1"]}}, "route": [["PoolRoute|p"]]}`)    // nested lists
	f.Fuzz(func(t *testing.T, in string) {
		out, err := Mcrouter("m.json", []byte(in))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "m.json") {
				t.Fatalf("error not placed: %v", err)
			}
			return
		}
		got := decode(t, out)
		if !strings.HasPrefix(got.L2.Compat, "mcrouter-") || len(got.L2.Servers) == 0 {
			t.Fatalf("incomplete translation: %+v\n%s", got, out)
		}
	})
}
