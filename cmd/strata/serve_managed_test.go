package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// TestReloadKeepsPublishedMap: once a control plane has published a map
// for a managed pool, a SIGHUP reload never replaces it: with the file
// unchanged nothing moves, and a file that adds a server changes the
// pool's membership (the new server gets a connection) but not the map.
func TestReloadKeepsPublishedMap(t *testing.T) {
	m1, m2, m3 := memcachedtest.Start(t), memcachedtest.Start(t), memcachedtest.Start(t)
	// A generous timeout: the first request waits for a dial, which a
	// loaded CI host running -race can make slow.
	conf := func(addrs ...string) string {
		return fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nmanaged = true\nshards = 16\ntimeout = \"5s\"\nservers = %s\n", tomlList(addrs))
	}
	ta := startApp(t, conf(m1.Addr, m2.Addr))
	pool := ta.l2.pool.p

	// The control plane publishes v1: every shard on m2.
	servers := []shardmap.Server{{Addr: m1.Addr, Weight: 1}, {Addr: m2.Addr, Weight: 1}}
	owner := make([]int, 16)
	for i := range owner {
		owner[i] = 1
	}
	published, err := shardmap.New(1, servers, owner)
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.ApplyTopology(shardmap.Topology{Map: published}); err != nil {
		t.Fatal(err)
	}
	tc := mctext.Dial(t, ta.proxy.Addr())
	checkOnM2 := func(key string) {
		t.Helper()
		if r := tc.Set(key, "v", 0); r != "STORED" {
			t.Fatalf("set %s: %q", key, r)
		}
		if _, ok := rawGet(t, m2.Addr, key); !ok {
			t.Fatalf("%s is not on m2, the owner of every shard in the published map", key)
		}
	}
	checkOnM2("before")

	reload := func(cfg string) reloadReport {
		t.Helper()
		rewrite(t, ta.path, cfg)
		next, err := config.Load(ta.flags.Path, ta.flags)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ta.Reload(next)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	// The file unchanged: nothing to apply, the published map stays.
	if rep := reload(conf(m1.Addr, m2.Addr)); len(rep.Applied) != 0 || len(rep.Kept) != 0 {
		t.Errorf("reload of an unchanged file: %+v", rep)
	}
	if tp := pool.Topology(); !tp.Map.Equal(published) {
		t.Fatalf("reload with the file unchanged replaced the published map (version %d)", tp.Version())
	}
	checkOnM2("unchanged")

	// The file adds m3: membership grows, the map does not change.
	if rep := reload(conf(m1.Addr, m2.Addr, m3.Addr)); !slices.Contains(rep.Applied, "l2.servers") {
		t.Errorf("reload adding a server: %+v", rep)
	}
	if tp := pool.Topology(); !tp.Map.Equal(published) {
		t.Fatalf("reload adding a server replaced the published map (version %d)", tp.Version())
	}
	var addrs []string
	for _, s := range pool.Stats().Servers {
		addrs = append(addrs, s.Addr)
	}
	if !slices.Contains(addrs, m3.Addr) {
		t.Errorf("the added server is not a member: %v", addrs)
	}
	for i := 0; i < 20; i++ {
		checkOnM2(fmt.Sprint("added:", i))
	}
}

func tomlList(addrs []string) string {
	s := "["
	for i, a := range addrs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", a)
	}
	return s + "]"
}
