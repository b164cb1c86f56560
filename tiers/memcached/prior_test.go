package memcached

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// TestConvertBetweenLayouts: a pool converting from gomemcache over a, b
// to gomemcache over a, b, c serves by the prior layout until a map
// arrives and for the shards the map keeps on the layout, hands each key
// off from the prior layout's server to the new layout's (never to the
// map's owner, c here), and serves converted shards by the new layout.
func TestConvertBetweenLayouts(t *testing.T) {
	a, b, c := memcachedtest.Start(t).Addr, memcachedtest.Start(t).Addr, memcachedtest.Start(t).Addr
	h := newHarness(t, Config{
		Servers: []Server{{Addr: a}, {Addr: b}, {Addr: c}}, Shards: convertShards, Managed: true, Compat: "gomemcache",
		ConvertFrom:    &PriorLayout{Compat: "gomemcache", Servers: []Server{{Addr: a}, {Addr: b}}},
		RequestTimeout: 10 * time.Second, FailureThreshold: 100, ProbeInterval: 20 * time.Millisecond,
	}, 0)
	oldLayout, _ := (&Config{Compat: "gomemcache"}).compatLayout([]Server{{Addr: a}, {Addr: b}})
	newLayout := h.pool.route.Load().layout
	// k: on a under the prior layout, on b under the new; w another such
	// key; same: on one server under both.
	var ab []string
	same := ""
	for i := 0; len(ab) < 2 || same == ""; i++ {
		k := []byte("k" + strconv.Itoa(i))
		switch o, n := oldLayout.Server(k), newLayout.Server(k); {
		case o == 0 && n == 1:
			ab = append(ab, string(k))
		case o == n:
			same = string(k)
		}
	}
	k, w := ab[0], ab[1]
	list := []shardmap.Server{{Addr: a, Weight: 1}, {Addr: b, Weight: 1}, {Addr: c, Weight: 1}}
	v := uint64(0)
	publish := func(ph shardmap.MovePhase, from int, onLayout bool) {
		t.Helper()
		v++
		owner := make([]int, convertShards)
		var moves []shardmap.ShardMove
		var layout []int
		for sh := range owner {
			owner[sh] = 2 // c: a name only
			if ph != shardmap.MoveNone {
				moves = append(moves, shardmap.ShardMove{Shard: sh, Move: shardmap.Move{From: from, To: 2, Phase: ph}})
			}
			if onLayout {
				layout = append(layout, sh)
			}
		}
		m, err := shardmap.NewMoving(v, list, owner, moves)
		if err == nil {
			m, err = m.WithLayout(layout)
		}
		if err == nil {
			err = h.pool.ApplyTopology(shardmap.Topology{Map: m})
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	setAt(t, a, k, "warm")
	if got := h.pool.ServerFor([]byte(k)); got != a {
		t.Fatalf("unpublished: %s serves, want the prior layout's %s", got, a)
	}
	expect(t, "unpublished: get", h.one(get(k)), tiers.StatusHit, "warm")

	publish(shardmap.MovePrepare, shardmap.FromLayout, true)
	setAt(t, b, w, "old-at-b")
	expect(t, "prepare: set", h.one(set(w, "new")), tiers.StatusStored, "")
	if valueAt(t, a, w) != "new" || valueAt(t, b, w) != "" {
		t.Errorf("prepare: after a set, a has %q and b %q; want new and nothing", valueAt(t, a, w), valueAt(t, b, w))
	}

	publish(shardmap.MoveHandoff, shardmap.FromLayout, false)
	expect(t, "handoff: get filled from the prior layout", h.one(get(k)), tiers.StatusHit, "warm")
	if valueAt(t, b, k) != "warm" || valueAt(t, c, k) != "" {
		t.Errorf("handoff: b has %q, c %q; want the fill at b alone", valueAt(t, b, k), valueAt(t, c, k))
	}
	setAt(t, a, w, "old-at-a")
	expect(t, "handoff: set", h.one(set(w, "newer")), tiers.StatusStored, "")
	if valueAt(t, b, w) != "newer" || valueAt(t, a, w) != "" || valueAt(t, c, w) != "" {
		t.Errorf("handoff: after a set, b has %q, a %q, c %q; want newer at b alone", valueAt(t, b, w), valueAt(t, a, w), valueAt(t, c, w))
	}
	fills := h.pool.Stats().Moves.Fills
	setAt(t, h.pool.ServerFor([]byte(same)), same, "in-place")
	expect(t, "handoff: a key both layouts place alike", h.one(get(same)), tiers.StatusHit, "in-place")
	if h.pool.Stats().Moves.Fills != fills {
		t.Error("handoff: a key both layouts place alike was filled")
	}

	publish(shardmap.MoveNone, 0, false)
	if got := h.pool.ServerFor([]byte(k)); got != b {
		t.Errorf("converted: %s serves, want the new layout's %s", got, b)
	}
	expect(t, "converted: get", h.one(get(w)), tiers.StatusHit, "newer")
	// A move between members places nothing here: the new layout serves.
	publish(shardmap.MoveHandoff, 0, false)
	if got := h.pool.ServerFor([]byte(k)); got != b {
		t.Errorf("a member's move: %s serves, want the new layout's %s", got, b)
	}
	expect(t, "a member's move: get", h.one(get(w)), tiers.StatusHit, "newer")
}

// TestPriorLayoutRefused: ConvertFrom's mistakes are refused, each on
// its field.
func TestPriorLayoutRefused(t *testing.T) {
	base := func() Config {
		cfg := DefaultConfig()
		cfg.Servers, cfg.Managed, cfg.Compat = fourServers(), true, "twemproxy"
		cfg.ConvertFrom = &PriorLayout{Compat: "twemproxy", Distribution: "modula", Servers: fourServers()[:3]}
		return cfg
	}
	if err := base().Validate(); err != nil {
		t.Fatalf("a conversion from modula: %v", err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*Config)
	}{
		{"ConvertFrom", func(c *Config) { c.Managed = false }},
		{"ConvertFrom", func(c *Config) { c.Compat = "" }},
		{"ConvertFrom.Compat", func(c *Config) { c.ConvertFrom.Compat = "" }},
		{"ConvertFrom.Servers", func(c *Config) { c.ConvertFrom.Servers = nil }},
		{"ConvertFrom.Servers", func(c *Config) { c.ConvertFrom.Servers[0].Weight = 0 }},
		{"ConvertFrom.Distribution", func(c *Config) { c.ConvertFrom.Distribution = "random" }},
		{"ConvertFrom.Hash", func(c *Config) { c.ConvertFrom.Hash = "sha1" }},
	} {
		cfg := base()
		tc.edit(&cfg)
		var fe *FieldError
		if err := cfg.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
}
