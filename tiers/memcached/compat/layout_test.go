package compat

import (
	"errors"
	"sort"
	"testing"
)

func four(weights ...int) []Server {
	s := make([]Server, 4)
	for i := range s {
		s[i] = Server{Host: "127.0.0.1", Port: 20000 + i, Weight: 1}
		if weights != nil {
			s[i].Weight = weights[i]
		}
	}
	return s
}

// TestNewRefuses checks each refusal names the setting at fault.
func TestNewRefuses(t *testing.T) {
	named := four()
	named[1].Name = "b"
	dup := four()
	dup[0].Name, dup[1].Name = "x", "x"
	for _, c := range []struct {
		name    string
		spec    Spec
		servers []Server
		field   string
	}{
		{"unknown scheme", Spec{Scheme: "nginx"}, four(), "Scheme"},
		{"random", Spec{Scheme: Twemproxy, Distribution: Random}, four(), "Distribution"},
		{"unknown distribution", Spec{Scheme: Twemproxy, Distribution: "vnode"}, four(), "Distribution"},
		{"unknown hash", Spec{Scheme: Twemproxy, Hash: "sha1"}, four(), "Hash"},
		{"unchecked libmemcached hash", Spec{Scheme: LibmemcachedKetama, Hash: "hsieh"}, four(), "Hash"},
		{"ketama_weighted on twemproxy", Spec{Scheme: Twemproxy, Distribution: KetamaWeighted}, four(), "Distribution"},
		{"short hash tag", Spec{Scheme: Twemproxy, HashTag: "{"}, four(), "HashTag"},
		{"hash on gomemcache", Spec{Scheme: Gomemcache, Hash: "md5"}, four(), "Hash"},
		{"distribution on pymemcache", Spec{Scheme: Pymemcache, Distribution: Ketama}, four(), "Distribution"},
		{"hash tag on libmemcached", Spec{Scheme: LibmemcachedKetama, HashTag: "{}"}, four(), "HashTag"},
		{"seed on twemproxy", Spec{Scheme: Twemproxy, Seed: 3}, four(), "Seed"},
		{"weights on gomemcache", Spec{Scheme: Gomemcache}, four(1, 2, 1, 1), "Servers"},
		{"weights on pymemcache", Spec{Scheme: Pymemcache}, four(1, 1, 3, 1), "Servers"},
		{"weights on mcrouter", Spec{Scheme: McrouterCh3}, four(2, 1, 1, 1), "Servers"},
		{"names on python-memcached", Spec{Scheme: PythonMemcached}, named, "Servers"},
		{"duplicate names", Spec{Scheme: Twemproxy}, dup, "Servers"},
		{"no servers", Spec{Scheme: Gomemcache}, nil, "Servers"},
		{"negative weight", Spec{Scheme: Twemproxy}, four(1, -1, 1, 1), "Servers"},
	} {
		_, err := New(c.spec, c.servers)
		var se *SpecError
		if !errors.As(err, &se) || se.Field != c.field {
			t.Errorf("%s: err %v, want a SpecError on %s", c.name, err, c.field)
		}
	}
	_, err := New(Spec{Scheme: Twemproxy, Distribution: Random}, four())
	if !errors.Is(err, ErrNotReproducible) {
		t.Errorf("random: %v, want ErrNotReproducible", err)
	}
}

// TestTwemproxyKetamaHashesNameOrHost checks the continuum's input: a
// server's name when it has one, else host:port, and the host alone on
// port 11211. Two layouts whose servers hash the same strings place every
// key alike.
func TestTwemproxyKetamaHashesNameOrHost(t *testing.T) {
	a := []Server{{Host: "10.0.0.1", Port: 11211}, {Host: "10.0.0.2", Port: 11212}}
	b := []Server{{Host: "x", Port: 1, Name: "10.0.0.1"}, {Host: "y", Port: 2, Name: "10.0.0.2:11212"}}
	la, err := New(Spec{Scheme: Twemproxy}, a)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := New(Spec{Scheme: Twemproxy}, b)
	if err != nil {
		t.Fatal(err)
	}
	seen := [2]int{}
	for i := range 2000 {
		k := []byte{byte(i), byte(i >> 8), 'k'}
		if la.Server(k) != lb.Server(k) {
			t.Fatalf("key %q: %d by address, %d by name", k, la.Server(k), lb.Server(k))
		}
		seen[la.Server(k)]++
	}
	if seen[0] == 0 || seen[1] == 0 {
		t.Fatalf("keys per server %v: one server got none", seen)
	}
}

// TestHashTag checks twemproxy's tag rule: the part between the first
// opening character and the next closing one, when not empty, is hashed;
// otherwise the whole key is.
func TestHashTag(t *testing.T) {
	l, err := New(Spec{Scheme: Twemproxy, Distribution: Modula, Hash: "crc32a", HashTag: "{}"}, four())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, same string }{
		{"user{42}:name", "42"},
		{"{42}", "42"},
		{"a{42}b{7}", "42"},
		{"a{}b", "a{}b"},
		{"a{42", "a{42"},
	} {
		want := int(hashCRC32a([]byte(c.same)) % 4)
		// modula over four servers of weight 1, sorted by name: the
		// ports differ only in the last digit, so the order is the list's.
		if got := l.Server([]byte(c.key)); got != want {
			t.Errorf("%q: server %d, want that of %q (%d)", c.key, got, c.same, want)
		}
	}
}

// TestPointForIsLowerBound: the written-out continuum search finds what a
// lower-bound search finds (the first of equal values, 0 past the end), at
// each point's value, one either side, and the extremes, on a continuum
// with repeated values.
func TestPointForIsLowerBound(t *testing.T) {
	pts := []point{{5, 0}, {9, 1}, {9, 2}, {9, 3}, {100, 1}, {100, 0}, {1 << 31, 2}, {^uint32(0) - 1, 3}}
	for n := 1; n <= len(pts); n++ {
		l := &Layout{}
		l.setContinuum(pts[:n])
		probes := []uint32{0, ^uint32(0)}
		for _, p := range pts[:n] {
			probes = append(probes, p.value-1, p.value, p.value+1)
		}
		for _, h := range probes {
			want := sort.Search(n, func(i int) bool { return pts[i].value >= h })
			if want == n {
				want = 0
			}
			if got := l.pointFor(h); got != want {
				t.Errorf("%d points, h %d: point %d, want %d", n, h, got, want)
			}
		}
	}
}
