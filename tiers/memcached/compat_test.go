package memcached

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers/memcached/compat"
)

func fourServers(weights ...int) []Server {
	s := make([]Server, 4)
	for i := range s {
		s[i] = Server{Addr: "127.0.0.1:" + strconv.Itoa(21000+i), Weight: 1}
		if weights != nil {
			s[i].Weight = weights[i]
		}
	}
	return s
}

// TestValidateRefusesCompatSettings: every compat setting a pool cannot
// honour is a FieldError on the Config field a configuration reader maps
// onto its key.
func TestValidateRefusesCompatSettings(t *testing.T) {
	named := fourServers()
	named[2].Name = "c"
	for _, c := range []struct {
		name  string
		edit  func(*Config)
		field string
		msg   string
	}{
		{"unknown scheme", func(c *Config) { c.Compat = "dynomite" }, "Compat", "unknown scheme"},
		{"random distribution", func(c *Config) { c.Compat, c.Distribution = "twemproxy", "random" }, "Distribution", "cannot be reproduced"},
		{"unknown hash", func(c *Config) { c.Compat, c.Hash = "twemproxy", "sha256" }, "Hash", "unknown hash"},
		{"hash the scheme lacks", func(c *Config) { c.Compat, c.Hash = "gomemcache", "md5" }, "Hash", "gomemcache has no hash"},
		{"hash tag the scheme lacks", func(c *Config) { c.Compat, c.HashTag = "pymemcache", "{}" }, "HashTag", "no hashtag"},
		{"weights the scheme lacks", func(c *Config) { c.Compat, c.Servers = "mcrouter-ch3", fourServers(1, 1, 2, 1) }, "Servers", "cannot express server weights"},
		{"names the scheme lacks", func(c *Config) { c.Compat, c.Servers = "libmemcached-ketama", named }, "Servers", "does not name servers"},
		{"hash without compat", func(c *Config) { c.Hash = "md5" }, "Hash", "set compat"},
		{"seed without compat", func(c *Config) { c.CompatSeed = 4 }, "CompatSeed", "set compat"},
		{"name without compat", func(c *Config) { c.Servers = named }, "Servers", "needs compat"},
	} {
		cfg := DefaultConfig()
		cfg.Servers = fourServers()
		c.edit(&cfg)
		err := cfg.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want a FieldError on %s saying %q", c.name, err, c.field, c.msg)
		}
		if _, err := New(cfg, newTestLoops(1)); err == nil {
			t.Errorf("%s: New accepted it", c.name)
		}
	}
	ok := DefaultConfig()
	ok.Servers, ok.Compat, ok.Distribution, ok.Hash, ok.HashTag = named, "twemproxy", "modula", "murmur", "{}"
	ok.Servers[1].Weight = 3
	if err := ok.Validate(); err != nil {
		t.Fatalf("a twemproxy pool with weights, names, hash and tag: %v", err)
	}
}

// TestCompatPoolRoutesByLayout: a compat pool sends each key to the server
// the layout names over the configured list, before and after SetServers,
// and a SetServers the scheme cannot express is refused with the pool
// unchanged.
func TestCompatPoolRoutesByLayout(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Servers, cfg.Compat = fourServers(), "gomemcache"
	p, err := New(cfg, newTestLoops(1))
	if err != nil {
		t.Fatal(err)
	}
	check := func(list []Server) {
		t.Helper()
		cs := make([]compat.Server, len(list))
		for i, s := range list {
			cs[i] = compat.Server{Host: "127.0.0.1", Port: 21000 + i}
			if s.Addr != "127.0.0.1:"+strconv.Itoa(21000+i) {
				t.Fatalf("test list out of order: %v", list)
			}
		}
		l, err := compat.New(compat.Spec{Scheme: compat.Gomemcache}, cs)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for i := range 1000 {
			k := []byte("key:" + strconv.Itoa(i))
			want := list[l.Server(k)].Addr
			if got := p.ServerFor(k); got != want {
				t.Fatalf("%s: pool sends it to %s, the layout to %s", k, got, want)
			}
			per[want]++
		}
		if len(per) != len(list) {
			t.Fatalf("keys reached %d of %d servers", len(per), len(list))
		}
	}
	check(cfg.Servers)
	three := fourServers()[:3]
	if err := p.SetServers(three); err != nil {
		t.Fatal(err)
	}
	check(three)
	var fe *FieldError
	if err := p.SetServers(fourServers(1, 2, 1, 1)); !errors.As(err, &fe) || fe.Field != "Servers" {
		t.Fatalf("SetServers with weights on gomemcache: %v", err)
	}
	check(three)
}

func TestParseServer(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Server
		err  bool
	}{
		{"10.0.0.1:11211", Server{Addr: "10.0.0.1:11211", Weight: 1}, false},
		{"10.0.0.1:11211:3", Server{Addr: "10.0.0.1:11211", Weight: 3}, false},
		{"10.0.0.1:11211:1 cache-a", Server{Addr: "10.0.0.1:11211", Weight: 1, Name: "cache-a"}, false},
		{"[::1]:11211:2", Server{Addr: "[::1]:11211", Weight: 2}, false},
		{"[::1]:11211", Server{Addr: "[::1]:11211", Weight: 1}, false},
		{"10.0.0.1:11211 cache-a", Server{}, true}, // a name follows a weight
		{"10.0.0.1", Server{}, true},
		{"10.0.0.1:11211:x", Server{}, true},
		{"10.0.0.1:0:1", Server{}, true},
	} {
		got, err := ParseServer(c.in)
		if (err != nil) != c.err || (!c.err && got != c.want) {
			t.Errorf("ParseServer(%q) = %+v, %v; want %+v (error %v)", c.in, got, err, c.want, c.err)
		}
	}
}

// FuzzParseServer: whatever it reads, ParseServer either refuses it or
// returns a dialable address, and writing the server back in the long
// form reads back the same server.
func FuzzParseServer(f *testing.F) {
	for _, s := range []string{
		"10.0.0.1:11211",          // the plain form
		"10.0.0.1:11211:3",        // with a weight
		"10.0.0.1:11211:1 node-a", // twemproxy's form with a name
		"[::1]:11211:2",           // IPv6
		"host:1:2:3",              // one colon too many
		" a:1:1  b ",              // spaces around
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sv, err := ParseServer(s)
		if err != nil {
			return
		}
		if err := CheckAddress(sv.Addr); err != nil {
			t.Fatalf("%q: accepted an address CheckAddress refuses: %v", s, err)
		}
		long := sv.Addr + ":" + strconv.Itoa(sv.Weight)
		if sv.Name != "" {
			long += " " + sv.Name
		}
		again, err := ParseServer(long)
		if err != nil || again != sv {
			t.Fatalf("%q read as %+v; its long form %q read as %+v, %v", s, sv, long, again, err)
		}
	})
}
