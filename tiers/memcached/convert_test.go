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

// convertPair is a managed gomemcache pool over two memcached, a and b,
// converting to a map in which b owns every shard.
type convertPair struct {
	*harness
	a, b string
	list []shardmap.Server
	v    uint64
	// onA is a key the layout puts on a (it moves to b); onB one it puts
	// on b already (nothing to hand off). w and s are more keys on a.
	onA, onB, w, s string
}

const convertShards = 8

func newConvertPair(t *testing.T) *convertPair {
	a, b := memcachedtest.Start(t).Addr, memcachedtest.Start(t).Addr
	h := newHarness(t, Config{
		Servers: []Server{{Addr: a}, {Addr: b}}, Shards: convertShards, Managed: true, Compat: "gomemcache",
		RequestTimeout: 10 * time.Second, FailureThreshold: 100, ProbeInterval: 20 * time.Millisecond,
	}, 0)
	cp := &convertPair{harness: h, a: a, b: b, list: []shardmap.Server{{Addr: a, Weight: 1}, {Addr: b, Weight: 1}}}
	var onA []string
	for i := 0; len(onA) < 3 || cp.onB == ""; i++ {
		k := "k" + strconv.Itoa(i)
		switch h.pool.ServerFor([]byte(k)) {
		case a:
			onA = append(onA, k)
		case b:
			cp.onB = k
		}
	}
	cp.onA, cp.w, cp.s = onA[0], onA[1], onA[2]
	return cp
}

// phase applies the next version: every shard converting to b in ph
// (MoveNone: converted), or, with layoutOnly, every shard on the layout
// without moves.
func (cp *convertPair) phase(ph shardmap.MovePhase, layoutOnly bool) {
	cp.t.Helper()
	cp.v++
	owner := make([]int, convertShards)
	var moves []shardmap.ShardMove
	var layout []int
	for sh := range owner {
		owner[sh] = 1
		if ph != shardmap.MoveNone {
			moves = append(moves, shardmap.ShardMove{Shard: sh, Move: shardmap.Move{From: shardmap.FromLayout, To: 1, Phase: ph}})
		}
		if ph == shardmap.MovePrepare || layoutOnly {
			layout = append(layout, sh)
		}
	}
	m, err := shardmap.NewMoving(cp.v, cp.list, owner, moves)
	if err == nil {
		m, err = m.WithLayout(layout)
	}
	if err == nil {
		err = cp.pool.ApplyTopology(shardmap.Topology{Map: m})
	}
	if err != nil {
		cp.t.Fatal(err)
	}
}

// TestConvertPhases: a managed compat pool serves by its layout until a
// map arrives, then by the map's shards on the layout, and converts the
// others with a per-key source: the layout's server for the key, or no
// handoff at all for a key the layout already puts on the owner.
func TestConvertPhases(t *testing.T) {
	cp := newConvertPair(t)
	a, b, onA, onB := cp.a, cp.b, cp.onA, cp.onB

	setAt(t, a, onA, "warm-a")
	setAt(t, b, onB, "warm-b")
	expect(t, "unpublished: get by the layout", cp.one(get(onA)), tiers.StatusHit, "warm-a")
	if n := cp.pool.Stats().Moves.OnLayout; n != convertShards {
		t.Errorf("unpublished: %d shards on the layout, want all %d", n, convertShards)
	}
	cp.phase(shardmap.MoveNone, true)
	expect(t, "all on the layout: get", cp.one(get(onA)), tiers.StatusHit, "warm-a")
	if cp.pool.ServerFor([]byte(onA)) != a {
		t.Error("a map with every shard on the layout routes by the owner")
	}

	// Prepare: reads by the layout; writes at the layout's server, then
	// deleted at the owner.
	cp.phase(shardmap.MovePrepare, false)
	expect(t, "prepare: get", cp.one(get(onA)), tiers.StatusHit, "warm-a")
	w := cp.w
	setAt(t, b, w, "old-at-b")
	expect(t, "prepare: set", cp.one(set(w, "new")), tiers.StatusStored, "")
	if valueAt(t, a, w) != "new" || valueAt(t, b, w) != "" {
		t.Errorf("prepare: after a set, a has %q and b %q; want new and nothing", valueAt(t, a, w), valueAt(t, b, w))
	}
	expect(t, "prepare: get of a key already on the owner", cp.one(get(onB)), tiers.StatusHit, "warm-b")

	// Handoff: the owner serves and fills from the layout's server.
	cp.phase(shardmap.MoveHandoff, false)
	before := cp.pool.Stats().Moves
	expect(t, "handoff: get filled from the layout", cp.one(get(onA)), tiers.StatusHit, "warm-a")
	if valueAt(t, b, onA) != "warm-a" {
		t.Error("handoff: the fill did not store at the owner")
	}
	expect(t, "handoff: get of a key already on the owner", cp.one(get(onB)), tiers.StatusHit, "warm-b")
	if got := cp.pool.Stats().Moves.Fills - before.Fills; got != 1 {
		t.Errorf("handoff: %d fills, want 1 (the key on the owner needs none)", got)
	}
	setAt(t, a, w, "old-at-a")
	expect(t, "handoff: set", cp.one(set(w, "newer")), tiers.StatusStored, "")
	if valueAt(t, b, w) != "newer" || valueAt(t, a, w) != "" {
		t.Errorf("handoff: after a set, b has %q and a %q; want newer and nothing", valueAt(t, b, w), valueAt(t, a, w))
	}
	expect(t, "handoff: set of a key on the owner", cp.one(set(onB, "b2")), tiers.StatusStored, "")

	// Settle: no fills; writes still delete at the layout's server.
	cp.phase(shardmap.MoveSettle, false)
	setAt(t, a, cp.s, "only-at-a")
	if cp.pool.ServerFor([]byte(cp.s)) != b {
		t.Fatal("settle: the owner does not serve")
	}
	expect(t, "settle: get", cp.one(get(cp.s)), tiers.StatusMiss, "")
	expect(t, "settle: set", cp.one(set(cp.s, "new")), tiers.StatusStored, "")
	if valueAt(t, a, cp.s) != "" {
		t.Error("settle: a set did not delete at the layout's server")
	}

	// Converted: the owner alone.
	cp.phase(shardmap.MoveNone, false)
	if n := cp.pool.Stats().Moves.OnLayout; n != 0 {
		t.Errorf("converted: %d shards on the layout", n)
	}
	setAt(t, a, cp.s, "stale-at-a")
	expect(t, "final: get", cp.one(get(cp.s)), tiers.StatusHit, "new")
	expect(t, "final: set", cp.one(set(cp.s, "newer")), tiers.StatusStored, "")
	if valueAt(t, a, cp.s) != "stale-at-a" {
		t.Error("final: a set still deleted at the layout's server")
	}
}

// TestConvertNeedsLayout: a pool without a compat layout refuses a map
// that places shards by one, and keeps the map in force.
func TestConvertNeedsLayout(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Servers, cfg.Managed, cfg.Shards = fourServers(), true, convertShards
	p, err := New(cfg, newTestLoops(1))
	if err != nil {
		t.Fatal(err)
	}
	list := mapServers(cfg.Servers)
	m, _ := shardmap.New(1, list, make([]int, convertShards))
	conv, _ := m.WithLayout([]int{3})
	if err := p.ApplyTopology(shardmap.Topology{Map: conv}); !errors.Is(err, ErrNoLayout) {
		t.Fatalf("ApplyTopology of a converting map: %v, want ErrNoLayout", err)
	}
	if p.Topology().Version() != 0 {
		t.Error("the refused map is in force")
	}
	cfg.Compat = "gomemcache"
	if err := cfg.Validate(); err != nil {
		t.Errorf("a managed compat pool: %v", err)
	}
}
