package memcached

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// replicaTopology is version v of a map over mp's two servers in which a
// owns every shard and b is a replica of each in state st (none: no
// replicas), with b's incarnation inc.
func (mp *movePair) replicas(st *shardmap.ReplicaState, inc uint64) {
	mp.t.Helper()
	mp.v++
	owner := make([]int, moveShards)
	m, err := shardmap.New(mp.v, mp.list, owner)
	if err != nil {
		mp.t.Fatal(err)
	}
	if st != nil {
		var reps []shardmap.ShardReplica
		for sh := range owner {
			reps = append(reps, shardmap.ShardReplica{Shard: sh, Replica: shardmap.Replica{Server: 1, State: *st}})
		}
		if m, err = m.WithReplicas(reps); err != nil {
			mp.t.Fatal(err)
		}
	}
	members := []shardmap.Member{{Server: mp.list[0]}, {Server: mp.list[1], Incarnation: inc}}
	if err := mp.pool.ApplyTopology(shardmap.Topology{Map: m, Members: members}); err != nil {
		mp.t.Fatal(err)
	}
}

// statAt is a counter of memcached's "stats" at addr.
func statAt(t *testing.T, addr, name string) uint64 {
	t.Helper()
	for _, l := range strings.Split(direct(t, addr, "stats\r\n"), "\r\n") {
		if f := strings.Fields(l); len(f) == 3 && f[1] == name {
			n, _ := strconv.ParseUint(f[2], 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in the stats of %s", name, addr)
	return 0
}

var (
	writeOnly = func() *shardmap.ReplicaState { s := shardmap.ReplicaWriteOnly; return &s }()
	serving   = func() *shardmap.ReplicaState { s := shardmap.ReplicaServing; return &s }()
)

// TestReplicaRouting: where each replica state reads and writes, and that
// a failed delete at a replica fails the write.
func TestReplicaRouting(t *testing.T) {
	mp := newMovePair(t)
	a, b := mp.a.Addr, mp.b.Addr

	// Joining (write-only): reads at the owner only, writes delete at b.
	mp.replicas(writeOnly, 0)
	setAt(t, b, "k", "old-at-b")
	for i := range 6 {
		expect(t, fmt.Sprint("joining read ", i), mp.one(get("k")), tiers.StatusMiss, "")
	}
	expect(t, "set while joining", mp.one(set("k", "v1")), tiers.StatusStored, "")
	if valueAt(t, a, "k") != "v1" || valueAt(t, b, "k") != "" {
		t.Fatalf("after a set while joining: a %q, b %q; want v1 and nothing", valueAt(t, a, "k"), valueAt(t, b, "k"))
	}

	// Serving: reads alternate, b's misses fill from a.
	mp.replicas(serving, 0)
	getsA, getsB := statAt(t, a, "cmd_get"), statAt(t, b, "cmd_get")
	for i := range 8 {
		expect(t, fmt.Sprint("serving read ", i), mp.one(get("k")), tiers.StatusHit, "v1")
	}
	if valueAt(t, b, "k") != "v1" {
		t.Fatal("b's miss was not filled from a")
	}
	// valueAt's own mg counts once at each server it asks.
	da, db := statAt(t, a, "cmd_get")-getsA-1, statAt(t, b, "cmd_get")-getsB-1
	if da < 3 || db < 4 {
		t.Fatalf("8 reads spread as %d gets at the owner and %d at the replica; want both to serve", da, db)
	}
	st := mp.pool.Stats().Replicas
	if st.Shards != moveShards || st.Reads != 4 || st.Fills != 1 {
		t.Fatalf("replica stats %+v; want %d shards, 4 replica reads, 1 fill", st, moveShards)
	}
	// Every write runs at the owner and deletes at the replica.
	expect(t, "set while serving", mp.one(set("k", "v2")), tiers.StatusStored, "")
	if valueAt(t, b, "k") != "" {
		t.Fatal("a set left the replica's copy")
	}
	for i := range 4 {
		expect(t, fmt.Sprint("read after set ", i), mp.one(get("k")), tiers.StatusHit, "v2")
	}
	expect(t, "set n", mp.one(set("n", "5")), tiers.StatusStored, "")
	for range 2 {
		mp.one(get("n")) // fills b
	}
	r := mp.one(tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("n"), Delta: 2, WantValue: true})
	if r.Status == tiers.StatusError || valueAt(t, a, "n") != "7" || valueAt(t, b, "n") != "" {
		t.Fatalf("incr: %v %q; a %q, b %q; want 7 at the owner and nothing at the replica", r.Status, r.Value, valueAt(t, a, "n"), valueAt(t, b, "n"))
	}
	// A touch changes the TTL at the owner: the replica's copy, filled
	// with the old one, goes.
	expect(t, "set t", mp.one(set("t", "x")), tiers.StatusStored, "")
	for range 2 {
		mp.one(get("t")) // fills b
	}
	if valueAt(t, b, "t") != "x" {
		t.Fatal("b's miss of t was not filled")
	}
	touch := tiers.Request{Kind: tiers.KindGet, Key: []byte("t"), HasTTL: true, TTL: 50}
	expect(t, "touch", mp.one(touch), tiers.StatusHit, "")
	if valueAt(t, b, "t") != "" {
		t.Fatal("a touch left the replica's copy with its old TTL")
	}
	expect(t, "delete", mp.one(del("k")), tiers.StatusStored, "")
	for i := range 4 {
		expect(t, fmt.Sprint("read after delete ", i), mp.one(get("k")), tiers.StatusMiss, "")
	}

	// Leaving (write-only): reads at the owner only again.
	mp.replicas(writeOnly, 0)
	setAt(t, b, "k", "old-at-b")
	for i := range 4 {
		expect(t, fmt.Sprint("leaving read ", i), mp.one(get("k")), tiers.StatusMiss, "")
	}

	// A replica that cannot take the delete fails the write: it would
	// otherwise keep the value the write replaced.
	mp.replicas(serving, 0)
	mp.b.Stop()
	r = mp.one(set("k", "v3"))
	if r.Status != tiers.StatusError {
		t.Fatalf("a set whose replica delete failed: %v, want an error", r.Status)
	}
	if mp.pool.Stats().Replicas.WriteFailed != 1 {
		t.Fatalf("replica write failures %d, want 1", mp.pool.Stats().Replicas.WriteFailed)
	}
}

// TestReplicaBackNeedsFlush: a server that was a replica of a shard, lost
// it and gets it back serves its old copies, unless the map gives it a
// new incarnation (the pool flushes it first). This is why the control
// plane must not make a server a replica again of a shard it held.
func TestReplicaBackNeedsFlush(t *testing.T) {
	for _, bump := range []bool{false, true} {
		t.Run(fmt.Sprintf("new incarnation %v", bump), func(t *testing.T) {
			mp := newMovePair(t)
			mp.replicas(writeOnly, 0)
			mp.replicas(serving, 0)
			expect(t, "v1", mp.one(set("k", "v1")), tiers.StatusStored, "")
			for range 2 {
				mp.one(get("k")) // one of them fills b
			}
			mp.replicas(writeOnly, 0)
			mp.replicas(nil, 0)
			expect(t, "v2 with b gone", mp.one(set("k", "v2")), tiers.StatusStored, "")
			if valueAt(t, mp.b.Addr, "k") != "v1" {
				t.Fatal("b no longer holds its old copy; the test proves nothing")
			}
			inc := uint64(0)
			if bump {
				inc = 1
			}
			mp.replicas(writeOnly, inc)
			mp.replicas(serving, inc)
			if bump {
				mp.loops.until(t, 20*time.Second, "b flushed and up", func() bool {
					n, ok := mp.pool.Flushed(mp.b.Addr)
					return ok && n == 1 && serverState(mp.pool, mp.b.Addr) == "up"
				})
			}
			old := 0
			for range 4 {
				r := mp.one(get("k"))
				if r.Status == tiers.StatusHit && string(r.Value) == "v1" {
					old++
				}
			}
			if bump && old > 0 {
				t.Fatalf("%d of 4 reads served b's old copy after a flush", old)
			}
			if !bump && old == 0 {
				t.Fatal("without a flush no read met b's old copy: the rule is not shown")
			}
		})
	}
}
