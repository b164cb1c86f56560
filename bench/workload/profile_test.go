package workload

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodProfile = `# a user's profile
name = "photos"
clusters = 4
overlap = 0.75
fill_on_miss = true

[mix]
get = 0.8
set = 0.15
delete = 0.05

[[family]]
name = "photo"
pattern = "photo:{id}:meta"
keys = 1000
alpha = 0.8
key_size = { dist = "uniform", min = 20, max = 30 }
value_size = { dist = "lognormal", median = 230, sigma = 1.0, min = 1, max = 65536 }
ttl = { dist = "empirical", table = [[60, 1], [3600, 3]] }

[[family]]
name = "count"
keys = 500
weight = 0.25
value_size = { dist = "fixed", value = 8 }
`

func TestParseProfile(t *testing.T) {
	p, err := Parse("photos.toml", []byte(goodProfile))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "photos" || p.Clusters != 4 || p.Overlap != 0.75 || !p.FillOnMiss || p.Prefill {
		t.Errorf("top level: %+v", p)
	}
	if p.Mix != (Mix{Get: 0.8, Set: 0.15, Delete: 0.05}) {
		t.Errorf("mix: %+v", p.Mix)
	}
	if len(p.Families) != 2 {
		t.Fatalf("families: %d", len(p.Families))
	}
	f0, f1 := p.Families[0], p.Families[1]
	if f0.Weight != 1 || f1.Weight != 0.25 {
		t.Errorf("weights %v, %v: want default 1 and explicit 0.25", f0.Weight, f1.Weight)
	}
	if f0.KeySize == nil || f0.KeySize.Kind != "uniform" || f0.KeySize.Max != 30 {
		t.Errorf("key_size: %+v", f0.KeySize)
	}
	if f0.TTL.Kind != "empirical" || len(f0.TTL.Table) != 2 || f0.TTL.Table[1][0] != 3600 {
		t.Errorf("ttl: %+v", f0.TTL)
	}
	if f1.Pattern != "count:{id}" || f1.ValueSize.Value != 8 || f1.TTL.Kind != "fixed" {
		t.Errorf("defaults of the second family: %+v", f1)
	}
	if _, err := New(p); err != nil {
		t.Fatal(err)
	}
}

func TestProfileDefaults(t *testing.T) {
	p, err := Parse("min.toml", []byte("[[family]]\nkeys = 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Clusters != 1 || p.Overlap != 1 || p.Mix != (Mix{Get: 0.9, Set: 0.1}) || p.Families[0].Weight != 1 {
		t.Errorf("defaults: %+v", p)
	}
	// Weights given inline keep their value; an explicit 0 stays 0.
	p, err = Parse("inline.toml", []byte(`family = [{ name = "a", keys = 5, weight = 0.5 }, { name = "b", keys = 5, weight = 0 }, { name = "c", keys = 5 }]`))
	if err != nil {
		t.Fatal(err)
	}
	if w := []float64{p.Families[0].Weight, p.Families[1].Weight, p.Families[2].Weight}; w[0] != 0.5 || w[1] != 0 || w[2] != 1 {
		t.Errorf("weights %v, want [0.5 0 1]", w)
	}
}

// Every error names the line it comes from.
func TestProfileErrorsNameTheirLine(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		key       string
		unknown   bool
	}{
		{"top-level typo", "name = \"x\"\nclusterz = 3\n[[family]]\nkeys = 1\n", 2, "clusterz", true},
		{"typo in mix", "[mix]\nget = 1\n\nsett = 0.1\n[[family]]\nkeys = 1\n", 4, "mix.sett", true},
		{"typo in second family", strings.Replace(goodProfile, "weight = 0.25", "wieght = 0.25", 1), 24, "family.wieght", true},
		{"typo inside an inline table", strings.Replace(goodProfile, "sigma = 1.0", "sigmaa = 1.0", 1), 18, "family.value_size.sigmaa", true},
		{"unknown table", "[mixx]\nget = 1\n[[family]]\nkeys = 1\n", 1, "mixx", true},
		{"bad value in second family", strings.Replace(goodProfile, `{ dist = "fixed", value = 8 }`, `{ dist = "lognormal", median = -1 }`, 1), 25, "family[1].value_size.median", false},
		{"bad overlap", "overlap = 1.5\n[[family]]\nkeys = 1\n", 1, "overlap", false},
		{"pattern without id", "\n[[family]]\npattern = \"k:\"\nkeys = 1\n", 3, "family[0].pattern", false},
		{"missing keys reported at the family", "[mix]\nget = 1\n\n[[family]]\nname = \"a\"\n", 4, "family[0].keys", false},
		{"unknown distribution", "[[family]]\nkeys = 1\nttl = { dist = \"zipfy\" }\n", 3, "family[0].ttl.dist", false},
		{"wrong type", "clusters = \"four\"\n[[family]]\nkeys = 1\n", 1, "clusters", false},
		{"syntax error", "clusters = = 4\n", 1, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.toml", []byte(tc.src))
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v (%T), want a *ProfileError", err, err)
			}
			if pe.Line != tc.line {
				t.Errorf("line %d, want %d (%v)", pe.Line, tc.line, err)
			}
			if tc.key != "" && pe.Key != tc.key {
				t.Errorf("key %q, want %q (%v)", pe.Key, tc.key, err)
			}
			if errors.Is(err, ErrUnknownKey) != tc.unknown {
				t.Errorf("errors.Is(ErrUnknownKey) = %v, want %v", !tc.unknown, tc.unknown)
			}
			if !strings.HasPrefix(err.Error(), "p.toml:") {
				t.Errorf("message %q does not start with the file name", err)
			}
		})
	}
}

func TestLoadFileNamesProfileAfterFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mine.toml")
	if err := os.WriteFile(path, []byte("[[family]]\nkeys = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "mine" {
		t.Errorf("name %q, want mine", p.Name)
	}
	if _, err := Lookup("no-such-profile"); err == nil || !strings.Contains(err.Error(), "getset-90-10") {
		t.Errorf("unknown profile: %v, want an error listing the built-ins", err)
	}
}

func TestBuiltinsCompile(t *testing.T) {
	names := BuiltinNames()
	for _, want := range []string{"getset-90-10", "zipf", "twitter-read", "twitter-write", "twitter-mixed"} {
		if _, ok := Builtin(want); !ok {
			t.Errorf("built-in %q missing (have %v)", want, names)
		}
	}
	for _, n := range names {
		p, _ := Builtin(n)
		w, err := New(p)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		g := w.Generator(0, 0)
		var r Request
		for i := 0; i < 1000; i++ {
			g.Next(&r)
			if len(r.Key) == 0 || len(r.Key) > MaxKeyLen || r.ValueSize > MaxValueSize || r.TTL < 0 {
				t.Fatalf("%s: bad request %+v", n, r)
			}
		}
	}
	gs, _ := Builtin("getset-90-10")
	if gs.Mix.Get != 0.9 || gs.Mix.Set != 0.1 || gs.Families[0].ValueSize.Value != 100 || gs.Families[0].Alpha != 0 || !gs.Prefill {
		t.Errorf("getset-90-10 is not the issue's speed workload: %+v", gs)
	}
}
