package memcached

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// TestMustFlush: the re-entry rule, case by case.
func TestMustFlush(t *testing.T) {
	active := func(inc uint64) shardmap.Member { return shardmap.Member{Incarnation: inc} }
	returning := func(inc uint64) shardmap.Member {
		return shardmap.Member{State: shardmap.MemberReturning, Incarnation: inc}
	}
	for _, c := range []struct {
		name          string
		m             shardmap.Member
		known         uint64
		seen          bool
		done          uint64
		flushed, want bool
	}{
		{"first sight, active", active(3), 0, false, 0, false, false},
		{"same incarnation", active(3), 3, true, 0, false, false},
		{"bumped", active(4), 3, true, 0, false, true},
		{"bumped, already flushed", active(4), 3, true, 4, true, false},
		{"bumped, an older one flushed", active(4), 3, true, 3, true, true},
		{"returning, first sight", returning(0), 0, false, 0, false, true},
		{"returning, flushed", returning(2), 2, true, 2, true, false},
		{"returning again", returning(3), 2, true, 2, true, true},
	} {
		if got := mustFlush(c.m, c.known, c.seen, c.done, c.flushed); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// topo is a topology of version v with every shard on list[owner] and a
// (list[0]) in state stA under incarnation incA.
func topo(t *testing.T, v uint64, list []shardmap.Server, owner int, incA uint64, stA shardmap.MemberState) shardmap.Topology {
	return shardmap.Topology{Map: allOn(t, v, moveShards, list, owner), Members: []shardmap.Member{
		{Server: list[0], State: stA, Incarnation: incA}, {Server: list[1]},
	}}
}

// TestReentryFlush: a server the published map took away and gives back
// under a new incarnation is flushed before it is read, even by a pool
// that never saw it fail and skipped the maps in between; one given back
// under the same incarnation is not (that is the control plane's rule).
func TestReentryFlush(t *testing.T) {
	mp := newMovePair(t)
	a, list := mp.a.Addr, mp.list
	if err := mp.pool.ApplyTopology(topo(t, 1, list, 0, 0, shardmap.MemberActive)); err != nil {
		t.Fatal(err)
	}
	expect(t, "set on a", mp.one(set("k", "v1")), tiers.StatusStored, "")

	// Same incarnation: the pool trusts the map.
	if err := mp.pool.ApplyTopology(topo(t, 3, list, 0, 0, shardmap.MemberActive)); err != nil {
		t.Fatal(err)
	}
	expect(t, "same incarnation", mp.one(get("k")), tiers.StatusHit, "v1")

	// The pool jumps to v5: a owns everything again, incarnation 1 (v4,
	// which took a away, never reached it).
	if err := mp.pool.ApplyTopology(topo(t, 5, list, 0, 1, shardmap.MemberActive)); err != nil {
		t.Fatal(err)
	}
	if r := mp.one(get("k")); r.Status == tiers.StatusHit {
		t.Fatalf("read %q from a re-entered server before its flush", r.Value)
	}
	mp.loops.until(t, 20*time.Second, "a flushed and up", func() bool {
		inc, ok := mp.pool.Flushed(a)
		return ok && inc == 1 && serverState(mp.pool, a) == "up"
	})
	expect(t, "after the flush", mp.one(get("k")), tiers.StatusMiss, "")
	if valueAt(t, a, "k") != "" {
		t.Error("a still holds k after its re-entry flush")
	}

	// Returning: flushed at once, and not again when it gets shards under
	// the incarnation already flushed.
	expect(t, "set on a", mp.one(set("k", "v2")), tiers.StatusStored, "")
	if err := mp.pool.ApplyTopology(topo(t, 6, list, 1, 2, shardmap.MemberReturning)); err != nil {
		t.Fatal(err)
	}
	mp.loops.until(t, 20*time.Second, "a flushed for incarnation 2", func() bool {
		inc, _ := mp.pool.Flushed(a)
		return inc == 2 && serverState(mp.pool, a) == "up"
	})
	if valueAt(t, a, "k") != "" {
		t.Error("a returning server was not flushed")
	}
	setAt(t, a, "k2", "after-flush")
	if err := mp.pool.ApplyTopology(topo(t, 7, list, 0, 2, shardmap.MemberActive)); err != nil {
		t.Fatal(err)
	}
	expect(t, "given shards after its flush", mp.one(get("k2")), tiers.StatusHit, "after-flush")
}

func serverState(p *Pool, addr string) string {
	for _, s := range p.Stats().Servers {
		if s.Addr == addr {
			return s.State
		}
	}
	return "absent"
}
