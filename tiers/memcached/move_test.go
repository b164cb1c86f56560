package memcached

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// movingMap is a map of version v over servers in which every shard moves
// from servers[0] to servers[1] in phase ph (MoveNone: the move is over,
// servers[1] owns everything).
func movingMap(t *testing.T, v uint64, shards int, servers []shardmap.Server, ph shardmap.MovePhase) *shardmap.Map {
	t.Helper()
	owner := make([]int, shards)
	var moves []shardmap.ShardMove
	for sh := range owner {
		owner[sh] = 1
		if ph == shardmap.MovePrepare {
			owner[sh] = 0
		}
		if ph != shardmap.MoveNone {
			moves = append(moves, shardmap.ShardMove{Shard: sh, Move: shardmap.Move{From: 0, To: 1, Phase: ph}})
		}
	}
	m, err := shardmap.NewMoving(v, servers, owner, moves)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// direct sends raw commands to a memcached and returns its reply.
// The trailing mn marks the end of the reply.
func direct(t *testing.T, addr, cmds string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(cmds + "mn\r\n")); err != nil {
		t.Fatal(err)
	}
	var out []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(out, []byte("MN\r\n")) {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			t.Fatalf("asking %s: %v after %q", addr, err, out)
		}
	}
	return strings.TrimSuffix(string(out), "MN\r\n")
}

// valueAt is key's value at addr, asked directly; "" when absent.
func valueAt(t *testing.T, addr, key string) string {
	t.Helper()
	r := direct(t, addr, "mg "+key+" v\r\n")
	if !strings.HasPrefix(r, "VA ") {
		return ""
	}
	_, v, _ := strings.Cut(r, "\r\n")
	return strings.TrimSuffix(v, "\r\n")
}

func setAt(t *testing.T, addr, key, value string) {
	t.Helper()
	if r := direct(t, addr, fmt.Sprintf("ms %s %d T100 F7\r\n%s\r\n", key, len(value), value)); r != "HD\r\n" {
		t.Fatalf("seeding %s at %s: %q", key, addr, r)
	}
}

// movePair is a managed pool over two memcached, a (source) and b
// (destination), with the topology of phase ph applied.
type movePair struct {
	*harness
	a, b *memcachedtest.Server
	list []shardmap.Server
	v    uint64
}

const moveShards = 8

func newMovePair(t *testing.T) *movePair {
	a, b := memcachedtest.Start(t), memcachedtest.Start(t)
	h := newHarness(t, Config{
		Servers: []Server{{Addr: a.Addr}, {Addr: b.Addr}}, Shards: moveShards, Managed: true,
		RequestTimeout: 10 * time.Second, FailureThreshold: 100, ProbeInterval: 20 * time.Millisecond,
	}, 0)
	return &movePair{harness: h, a: a, b: b, list: []shardmap.Server{{Addr: a.Addr, Weight: 1}, {Addr: b.Addr, Weight: 1}}}
}

func (mp *movePair) phase(ph shardmap.MovePhase) {
	mp.t.Helper()
	mp.v++
	if err := mp.pool.ApplyTopology(shardmap.Topology{Map: movingMap(mp.t.(*testing.T), mp.v, moveShards, mp.list, ph)}); err != nil {
		mp.t.Fatal(err)
	}
}

func del(key string) tiers.Request { return tiers.Request{Kind: tiers.KindDelete, Key: []byte(key)} }

// TestMovePhases: where each phase reads, writes and deletes.
func TestMovePhases(t *testing.T) {
	mp := newMovePair(t)
	a, b := mp.a.Addr, mp.b.Addr

	// Prepare: reads at A only; writes at A, then deleted at B.
	mp.phase(shardmap.MovePrepare)
	setAt(t, a, "r", "at-a")
	setAt(t, b, "r", "at-b")
	expect(t, "prepare: get", mp.one(get("r")), tiers.StatusHit, "at-a")
	setAt(t, b, "w", "old-at-b")
	expect(t, "prepare: set", mp.one(set("w", "new")), tiers.StatusStored, "")
	if valueAt(t, a, "w") != "new" || valueAt(t, b, "w") != "" {
		t.Errorf("prepare: after a set, a has %q and b %q; want new and nothing", valueAt(t, a, "w"), valueAt(t, b, "w"))
	}
	setAt(t, a, "d", "x")
	setAt(t, b, "d", "x")
	expect(t, "prepare: delete", mp.one(del("d")), tiers.StatusStored, "")
	if valueAt(t, a, "d") != "" || valueAt(t, b, "d") != "" {
		t.Error("prepare: a delete left a copy")
	}
	if valueAt(t, b, "r") != "at-b" {
		t.Error("prepare: a read touched b")
	}

	// Handoff: reads at B, a miss filled from A with its flags and
	// remaining TTL; writes at B, then deleted at A.
	mp.phase(shardmap.MoveHandoff)
	expect(t, "handoff: get of a key both hold", mp.one(get("r")), tiers.StatusHit, "at-b")
	setAt(t, a, "f", "fill-me")
	r := mp.one(get("f"))
	expect(t, "handoff: get filled from a", r, tiers.StatusHit, "fill-me")
	if r.ClientFlags != 7 {
		t.Errorf("handoff: filled value has flags %d, want 7", r.ClientFlags)
	}
	meta := direct(t, b, "mg f v f t\r\n")
	if !strings.HasPrefix(meta, "VA 7 f7 t") || strings.Contains(meta, "t-1") {
		t.Errorf("handoff: the fill stored %q at b, want the value with flags 7 and a TTL", meta)
	}
	direct(t, a, "md f\r\n")
	expect(t, "handoff: second get, from b", mp.one(get("f")), tiers.StatusHit, "fill-me")
	expect(t, "handoff: get of a key neither holds", mp.one(get("none")), tiers.StatusMiss, "")
	if r := direct(t, b, "mg none v\r\n"); r != "EN\r\n" {
		t.Errorf("handoff: a failed fill left %q at b, want nothing", r)
	}
	setAt(t, a, "w2", "old-at-a")
	expect(t, "handoff: set", mp.one(set("w2", "new")), tiers.StatusStored, "")
	if valueAt(t, b, "w2") != "new" || valueAt(t, a, "w2") != "" {
		t.Errorf("handoff: after a set, b has %q and a %q; want new and nothing", valueAt(t, b, "w2"), valueAt(t, a, "w2"))
	}
	setAt(t, a, "d2", "x")
	setAt(t, b, "d2", "x")
	expect(t, "handoff: delete", mp.one(del("d2")), tiers.StatusStored, "")
	if valueAt(t, a, "d2") != "" || valueAt(t, b, "d2") != "" {
		t.Error("handoff: a delete left a copy")
	}

	// Settle: no more fills; writes still delete at A.
	mp.phase(shardmap.MoveSettle)
	setAt(t, a, "s", "only-at-a")
	expect(t, "settle: get", mp.one(get("s")), tiers.StatusMiss, "")
	if valueAt(t, b, "s") != "" {
		t.Error("settle: a read filled b")
	}
	expect(t, "settle: set", mp.one(set("s", "new")), tiers.StatusStored, "")
	if valueAt(t, b, "s") != "new" || valueAt(t, a, "s") != "" {
		t.Error("settle: a set did not go to b and delete at a")
	}
	// A placeholder some other proxy's fill left is not a value.
	direct(t, b, "mg ph v N5\r\n")
	expect(t, "settle: get of a placeholder", mp.one(get("ph")), tiers.StatusMiss, "")

	// Final: B alone.
	mp.phase(shardmap.MoveNone)
	setAt(t, a, "z", "stale-at-a")
	expect(t, "final: get", mp.one(get("z")), tiers.StatusMiss, "")
	expect(t, "final: set", mp.one(set("z", "new")), tiers.StatusStored, "")
	if valueAt(t, a, "z") != "stale-at-a" {
		t.Error("final: a set still deleted at a")
	}
}

// TestMoveWriteNotAcknowledged: a write whose delete at the other side of
// the move fails is reported as failed, in prepare and in handoff.
func TestMoveWriteNotAcknowledged(t *testing.T) {
	for _, tc := range []struct {
		ph   shardmap.MovePhase
		kill func(*movePair) *memcachedtest.Server
	}{
		{shardmap.MovePrepare, func(mp *movePair) *memcachedtest.Server { return mp.b }},
		{shardmap.MoveHandoff, func(mp *movePair) *memcachedtest.Server { return mp.a }},
	} {
		t.Run(tc.ph.String(), func(t *testing.T) {
			mp := newMovePair(t)
			mp.phase(tc.ph)
			tc.kill(mp).Stop()
			if r := mp.one(set("k", "v")); r.Status != tiers.StatusError {
				t.Errorf("set with the other side dead: %v, want an error", r.Status)
			}
			if r := mp.one(del("k")); r.Status != tiers.StatusError {
				t.Errorf("delete with the other side dead: %v, want an error", r.Status)
			}
		})
	}
}

// TestFillRaces drives a fill and a racing change at B into the one
// interleaving that matters: the fill has its lease at B and has read A
// (held there by SIGSTOP) when the change lands. The fill must not store
// or serve A's value.
func TestFillRaces(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(mp *movePair)
		want   string // at b afterwards
	}{
		{"write at b", func(mp *movePair) { direct(mp.t.(*testing.T), mp.b.Addr, "ms k 3\r\nnew\r\n") }, "new"},
		{"delete at b", func(mp *movePair) { direct(mp.t.(*testing.T), mp.b.Addr, "md k\r\n") }, ""},
		{"settle applied", func(mp *movePair) { mp.phase(shardmap.MoveSettle) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := newMovePair(t)
			mp.phase(shardmap.MoveHandoff)
			setAt(t, mp.a.Addr, "k", "old")
			mp.a.Pause(t)
			paused := true
			defer func() {
				if paused {
					mp.a.Resume(t)
				}
			}()
			c := newCall(get("k"))
			mp.pool.Do(&c.op)
			mp.pool.FlushLoop(0)
			mp.loops.until(t, 10*time.Second, "the lease at b", func() bool {
				return strings.Contains(direct(t, mp.b.Addr, "mg k c\r\n"), " Z")
			})
			tc.change(mp)
			mp.a.Resume(t)
			paused = false
			mp.wait(c)
			expect(t, "the raced get", &c.op.Res, tiers.StatusMiss, "")
			if got := valueAt(t, mp.b.Addr, "k"); got != tc.want {
				t.Errorf("b holds %q after the race, want %q", got, tc.want)
			}
			if r := direct(t, mp.b.Addr, "mg k v\r\n"); tc.want == "" && r != "EN\r\n" {
				t.Errorf("b answers %q after the race, want EN (no placeholder)", r)
			}
		})
	}
}

// TestConcurrentFills: of two reads racing for one key, one fills and the
// other gets a miss rather than the empty placeholder.
func TestConcurrentFills(t *testing.T) {
	mp := newMovePair(t)
	mp.phase(shardmap.MoveHandoff)
	setAt(t, mp.a.Addr, "k", "v")
	cs := mp.run(get("k"), get("k"))
	hits := 0
	for _, c := range cs {
		switch {
		case c.op.Res.Status == tiers.StatusHit && bytes.Equal(c.op.Res.Value, []byte("v")):
			hits++
		case c.op.Res.Status != tiers.StatusMiss:
			t.Errorf("racing get: %v %q", c.op.Res.Status, c.op.Res.Value)
		}
	}
	if hits != 1 {
		t.Errorf("%d racing gets filled, want 1", hits)
	}
	expect(t, "after the race", mp.one(get("k")), tiers.StatusHit, "v")
}

// TestNoMoveAllocatesNothing: while some shards move, a get of a shard
// that is not moving still allocates nothing once warm.
func TestNoMoveAllocatesNothing(t *testing.T) {
	mp := newMovePair(t)
	owner := make([]int, moveShards)
	owner[0] = 1
	m, err := shardmap.NewMoving(1, mp.list, owner, []shardmap.ShardMove{{Shard: 0, Move: shardmap.Move{From: 0, To: 1, Phase: shardmap.MoveHandoff}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := mp.pool.ApplyTopology(shardmap.Topology{Map: m}); err != nil {
		t.Fatal(err)
	}
	var cs []*call
	for i := 0; len(cs) < 8; i++ {
		key := fmt.Sprint("k", i)
		if mp.pool.ShardOf([]byte(key)) == 0 {
			continue
		}
		mp.one(set(key, strings.Repeat("v", 100)))
		c := newCall(get(key))
		c.op.Res.Value = make([]byte, 0, 128)
		cs = append(cs, c)
	}
	for range 10 {
		roundTrip(mp.harness, cs)
	}
	if n := testing.AllocsPerRun(200, func() { roundTrip(mp.harness, cs) }); n != 0 {
		t.Errorf("a warm batch of 8 gets of still shards allocates %.1f times while a shard moves", n)
	}
	for _, c := range cs {
		expect(t, "get of a still shard", &c.op.Res, tiers.StatusHit, strings.Repeat("v", 100))
	}
}

// TestMoveBackNeedsFlush: a shard moved back to a server that held it
// before reads that server's old copy, unless the map gives the server a
// new incarnation (which makes the pool flush it first). This is why the
// control plane must not return a shard to a server that may still hold
// its copies.
func TestMoveBackNeedsFlush(t *testing.T) {
	for _, bump := range []bool{false, true} {
		t.Run(fmt.Sprintf("new incarnation %v", bump), func(t *testing.T) {
			mp := newMovePair(t)
			ab := mp.list
			ba := []shardmap.Server{ab[1], ab[0]} // index 0 is always the source
			members := func(inc uint64) []shardmap.Member {
				return []shardmap.Member{{Server: ab[0], Incarnation: inc}, {Server: ab[1]}}
			}
			step := func(list []shardmap.Server, ph shardmap.MovePhase, inc uint64) {
				mp.v++
				tp := shardmap.Topology{Map: movingMap(t, mp.v, moveShards, list, ph), Members: members(inc)}
				if err := mp.pool.ApplyTopology(tp); err != nil {
					t.Fatal(err)
				}
			}
			step(ab, shardmap.MovePrepare, 0)
			expect(t, "v1 on a", mp.one(set("k", "v1")), tiers.StatusStored, "")
			for _, ph := range []shardmap.MovePhase{shardmap.MoveHandoff, shardmap.MoveSettle, shardmap.MoveNone} {
				step(ab, ph, 0)
			}
			expect(t, "v2 on b", mp.one(set("k", "v2")), tiers.StatusStored, "")
			if valueAt(t, mp.a.Addr, "k") != "v1" {
				t.Fatal("a no longer holds its old copy; the test proves nothing")
			}
			inc := uint64(0)
			if bump {
				inc = 1
			}
			step(ba, shardmap.MovePrepare, inc)
			step(ba, shardmap.MoveHandoff, inc)
			if bump {
				mp.loops.until(t, 20*time.Second, "a flushed and up", func() bool {
					n, ok := mp.pool.Flushed(mp.a.Addr)
					return ok && n == 1 && serverState(mp.pool, mp.a.Addr) == "up"
				})
				r := mp.one(get("k"))
				expect(t, "moved back after a flush", r, tiers.StatusHit, "v2")
				return
			}
			expect(t, "moved back without a flush: the old copy", mp.one(get("k")), tiers.StatusHit, "v1")
		})
	}
}
