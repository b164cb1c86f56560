package keyrule

import "testing"

// TestMatchAlloc pins the cost stated in the package doc: tag, delimiter
// and unclaimed keys allocate nothing; a regex rule allocates once.
func TestMatchAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates; make allocs runs this without it")
	}
	rs := mustNew(t,
		Rule{Prefix: "u:", Delimiter: ":", Field: 1},
		Rule{Prefix: "g:", Tag: true},
		Rule{Prefix: "s/", Regex: `^s/([0-9]+)/`},
	)
	var buf [64]byte
	cases := []struct {
		key    string
		allocs float64
	}{
		{"u:42:profile", 0},
		{"g:{abc}:feed", 0},
		{"x:unclaimed", 0},
		{"u:", 0},
		{"s/123/x", 1},
	}
	for _, c := range cases {
		key := []byte(c.key)
		got := testing.AllocsPerRun(200, func() {
			id := rs.Match(key)
			if id.Ok() {
				_ = rs.Hash(id)
				_ = rs.AppendName(buf[:0], id)
			}
		})
		if got != c.allocs {
			t.Errorf("%q: %v allocations, want %v", c.key, got, c.allocs)
		}
	}
}

// BenchmarkMatch: the request path's cost of locality rules, per kind.
func BenchmarkMatch(b *testing.B) {
	rs := mustNew(b,
		Rule{Prefix: "u:", Delimiter: ":", Field: 1},
		Rule{Prefix: "g:", Tag: true},
		Rule{Prefix: "s/", Regex: `^s/([0-9]+)/`},
		Rule{Prefix: "p:", Tag: true},
	)
	for _, k := range []string{"u:1234567:profile:v2", "g:{team-42}:feed", "s/123456/x", "page:home"} {
		key := []byte(k)
		b.Run(k, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				id := rs.Match(key)
				if id.Ok() {
					_ = rs.Hash(id)
				}
			}
		})
	}
}
