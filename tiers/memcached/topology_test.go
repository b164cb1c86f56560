package memcached

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// allOn is a map of version v that gives every shard to servers[owner].
func allOn(t *testing.T, v uint64, shards int, servers []shardmap.Server, owner int) *shardmap.Map {
	t.Helper()
	o := make([]int, shards)
	for i := range o {
		o[i] = owner
	}
	m, err := shardmap.New(v, servers, o)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// onServer reports whether addr holds key, asking it directly.
func onServer(t *testing.T, addr, key string) bool {
	t.Helper()
	raw, err := memcachedtest.Exchange(addr, []byte("mg "+key+" v\r\n"), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.HasPrefix(raw, []byte("VA "))
}

func serverAddrs(st PoolStats) []string {
	var out []string
	for _, s := range st.Servers {
		out = append(out, s.Addr)
	}
	return out
}

// TestManagedPoolTopologies: a managed pool routes by the topology it was
// given, ignores late or conflicting ones, and takes membership changes
// from its configuration without touching the published map.
func TestManagedPoolTopologies(t *testing.T) {
	a, b, c := memcachedtest.Start(t), memcachedtest.Start(t), memcachedtest.Start(t)
	const shards = 64
	// A generous timeout: a loaded CI host running -race must not fail a
	// request this test expects to succeed.
	h := newHarness(t, Config{Servers: []Server{{Addr: a.Addr}}, Shards: shards, Managed: true, RequestTimeout: 5 * time.Second}, 0)
	if v := h.pool.Topology().Version(); v != 0 {
		t.Fatalf("before any publication: version %d, want 0", v)
	}
	// Before a publication there is nothing to protect: the file's list
	// makes the map, as in an unmanaged pool.
	if err := h.pool.SetServers([]Server{{Addr: a.Addr}, {Addr: c.Addr}}); err != nil {
		t.Fatal(err)
	}
	if m := h.pool.Topology().Map; m.Version() != 0 || m.NumServers() != 2 {
		t.Fatalf("before a publication, SetServers left a map of %d servers", m.NumServers())
	}
	if err := h.pool.SetServers([]Server{{Addr: a.Addr}}); err != nil {
		t.Fatal(err)
	}

	// v1 puts every shard on b, which the file does not list.
	ab := []shardmap.Server{{Addr: a.Addr, Weight: 1}, {Addr: b.Addr, Weight: 1}}
	v1 := shardmap.Topology{Map: allOn(t, 1, shards, ab, 1)}
	if err := h.pool.ApplyTopology(v1); err != nil {
		t.Fatal(err)
	}
	expect(t, "set under v1", h.one(set("k1", "one")), tiers.StatusStored, "")
	if !onServer(t, b.Addr, "k1") || onServer(t, a.Addr, "k1") {
		t.Fatal("under v1 the key did not go to b alone")
	}

	// A replay of v1 is no change; a late v1 with other owners is stale.
	if err := h.pool.ApplyTopology(shardmap.Topology{Map: allOn(t, 1, shards, ab, 1)}); err != nil {
		t.Errorf("replayed v1: %v", err)
	}
	if err := h.pool.ApplyTopology(shardmap.Topology{Map: allOn(t, 1, shards, ab, 0)}); !errors.Is(err, shardmap.ErrStale) {
		t.Errorf("another v1: err %v, want ErrStale", err)
	}
	if got := h.pool.ServerFor([]byte("k1")); got != b.Addr {
		t.Errorf("after a stale topology k1 routes to %s, want %s", got, b.Addr)
	}

	// The configuration adds c and drops a: membership changes, the map
	// stays (a stays connected while the published map names it).
	if err := h.pool.SetServers([]Server{{Addr: c.Addr}}); err != nil {
		t.Fatal(err)
	}
	if tp := h.pool.Topology(); tp.Version() != 1 || !tp.Map.Equal(v1.Map) {
		t.Errorf("SetServers changed the published map: version %d", tp.Version())
	}
	if got, want := serverAddrs(h.pool.Stats()), sortedAddrs(a.Addr, b.Addr, c.Addr); !slices.Equal(got, want) {
		t.Errorf("servers after SetServers: %v, want %v", got, want)
	}

	// v2 moves everything to c and drains b; a leaves the pool.
	bc := []shardmap.Server{{Addr: b.Addr, Weight: 1}, {Addr: c.Addr, Weight: 1}}
	v2 := shardmap.Topology{Map: allOn(t, 2, shards, bc, 1), Members: []shardmap.Member{
		{Server: bc[0], State: shardmap.MemberDraining}, {Server: bc[1]},
	}}
	if err := h.pool.ApplyTopology(v2); err != nil {
		t.Fatal(err)
	}
	expect(t, "set under v2", h.one(set("k2", "two")), tiers.StatusStored, "")
	if !onServer(t, c.Addr, "k2") {
		t.Fatal("under v2 the key did not go to c")
	}
	st := h.pool.Stats()
	if got, want := serverAddrs(st), sortedAddrs(b.Addr, c.Addr); !slices.Equal(got, want) {
		t.Errorf("servers under v2: %v, want %v", got, want)
	}
	if st.Version != 2 {
		t.Errorf("stats version %d, want 2", st.Version)
	}
	for _, s := range st.Servers {
		want := map[string]string{b.Addr: "draining", c.Addr: "up"}[s.Addr]
		if s.Standing != want {
			t.Errorf("%s: standing %q, want %q", s.Addr, s.Standing, want)
		}
	}
	// A late v1 does not undo v2.
	if err := h.pool.ApplyTopology(v1); !errors.Is(err, shardmap.ErrStale) {
		t.Errorf("late v1: err %v, want ErrStale", err)
	}
	if got := h.pool.ServerFor([]byte("k1")); got != c.Addr {
		t.Errorf("after a late v1 k1 routes to %s, want %s", got, c.Addr)
	}
}

func TestTopologyRefused(t *testing.T) {
	list := []Server{{Addr: "127.0.0.1:1"}}
	ms := []shardmap.Server{{Addr: "127.0.0.1:1", Weight: 1}}
	p, err := New(Config{Servers: list, Shards: 8}, newTestLoops(1))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.ApplyTopology(shardmap.Topology{Map: allOn(t, 1, 8, ms, 0)}); !errors.Is(err, ErrNotManaged) {
		t.Errorf("unmanaged pool: err %v, want ErrNotManaged", err)
	}
	m, err := New(Config{Servers: list, Shards: 8, Managed: true}, newTestLoops(1))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.ApplyTopology(shardmap.Topology{Map: allOn(t, 1, 16, ms, 0)}); !errors.Is(err, shardmap.ErrInvalid) {
		t.Errorf("wrong number of shards: err %v, want ErrInvalid", err)
	}
	bad := []shardmap.Server{{Addr: "no-port", Weight: 1}}
	if err := m.ApplyTopology(shardmap.Topology{Map: allOn(t, 1, 8, bad, 0)}); err == nil {
		t.Error("a member without a port was accepted")
	}
	if v := m.Topology().Version(); v != 0 {
		t.Errorf("refused topologies changed the version to %d", v)
	}
}

func TestStanding(t *testing.T) {
	for _, c := range []struct {
		h    healthState
		m    shardmap.MemberState
		want string
	}{
		{stateUp, shardmap.MemberActive, "up"},
		{stateUp, shardmap.MemberDraining, "draining"},
		{stateUp, shardmap.MemberReturning, "returning"},
		{stateDown, shardmap.MemberDraining, "down"},
		{stateProbing, shardmap.MemberActive, "down"},
	} {
		if got := standing(c.h, c.m); got != c.want {
			t.Errorf("health %v, member %v: %q, want %q", c.h, c.m, got, c.want)
		}
	}
}

func sortedAddrs(addrs ...string) []string {
	out := append([]string(nil), addrs...)
	slices.Sort(out)
	return out
}
