package memcached_test

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// replicaState is the test controller's read replicas: per shard, server
// index to state.
type replicaState map[int]map[int]shardmap.ReplicaState

// topology is ms's map with the replicas of rs.
func (rs replicaState) topology(ms *mapState) shardmap.Topology {
	ms.t.Helper()
	tp := ms.topology(nil)
	var reps []shardmap.ShardReplica
	for sh := range len(ms.owner) {
		for srv := range 4 {
			if st, ok := rs[sh][srv]; ok {
				reps = append(reps, shardmap.ShardReplica{Shard: sh, Replica: shardmap.Replica{Server: srv, State: st}})
			}
		}
	}
	m, err := tp.Map.WithReplicas(reps)
	if err != nil {
		ms.t.Fatal(err)
	}
	tp.Map = m
	return tp
}

// TestReplicasRandomized: two strata over four memcached, clients reading,
// writing and deleting random keys through both, while the controller
// (this test) adds read replicas (joining, then serving) and removes them
// (leaving, then gone), publishing each step to the two strata at
// different moments and the next only once both applied the last, as the
// control loop does. A server that is replica of some shards and owner of
// others hangs (SIGSTOP): its replicas are dropped and its shards fail
// over; it continues with its old values and is flushed before it serves
// again. Another replica's server is killed (kill -9). No read may return
// a value older than an acknowledged write.
func TestReplicasRandomized(t *testing.T) {
	const (
		shards  = 16
		keys    = 200
		workers = 6
	)
	mcs, st, ms := startMoveRig(t, shards)
	rs := replicaState{}
	first := rs.topology(ms)
	for _, s := range st {
		if err := s.pool.ApplyTopology(first); err != nil {
			t.Fatal(err)
		}
	}
	wl := startWorkload(t, []string{st[0].addr, st[1].addr}, keys, workers)
	defer wl.halt()
	publish := func() { wl.publish(rs.topology(ms), st[0].pool, st[1].pool) }

	// add gives each shard of shs a replica on server on(shard), through
	// joining and serving. The rule the pools rely on: never on a server
	// that held the shard before (as owner or replica) and was not
	// flushed since.
	add := func(on func(shard int) int, shs ...int) {
		for _, sh := range shs {
			srv := on(sh)
			if ms.held[sh][srv] {
				t.Fatalf("test controller bug: replica of shard %d on server %d, which may hold its old copies", sh, srv)
			}
			ms.held[sh][srv] = true
			if rs[sh] == nil {
				rs[sh] = map[int]shardmap.ReplicaState{}
			}
			rs[sh][srv] = shardmap.ReplicaWriteOnly
		}
		publish()
		for _, sh := range shs {
			rs[sh][on(sh)] = shardmap.ReplicaServing
		}
		publish()
		wl.progress(300)
	}
	// next is the server off places after a shard's owner.
	next := func(off int) func(int) int {
		return func(sh int) int { return (ms.owner[sh] + off) % 4 }
	}
	// drop removes every replica of shs, through leaving and gone.
	drop := func(shs ...int) {
		for _, sh := range shs {
			for srv := range rs[sh] {
				rs[sh][srv] = shardmap.ReplicaWriteOnly
			}
		}
		publish()
		for _, sh := range shs {
			delete(rs, sh)
		}
		publish()
		wl.progress(300)
	}
	// lose takes server srv out: its replicas dropped at once, its shards
	// failed over to a server that never held them (no phases: nothing
	// can be read from it).
	lose := func(srv int) {
		for sh := range rs {
			delete(rs[sh], srv)
			if len(rs[sh]) == 0 {
				delete(rs, sh)
			}
		}
		for sh, o := range ms.owner {
			if o != srv {
				continue
			}
			to := -1
			for c := range 4 {
				if c != srv && !ms.held[sh][c] && serverState(st[0].pool, mcs[c].Addr) == "up" {
					to = c
					break
				}
			}
			if to < 0 {
				t.Fatalf("no clean server for shard %d", sh)
			}
			ms.give(sh, to)
		}
		publish()
	}

	// Replicas of the even shards on the next server, then of the odd
	// ones two servers on.
	add(next(1), 0, 2, 4, 6, 8, 10, 12, 14)
	drop(0, 4, 8, 12)
	add(next(2), 1, 5, 9, 13)

	// Server 3 hangs: it is replica of shards 2, 6, 10, 14 (owner 2) and
	// 1, 5, 9, 13 (owner 1), and owns 3, 7, 11, 15. Writes of those
	// shards fail until the controller drops its replicas and fails its
	// shards over; it continues with values overwritten meanwhile, so it
	// is flushed (returning, new incarnation) before it serves again.
	wl.progress(100)
	mcs[3].Pause(t)
	poll.Until(t, 60*time.Second, "server 3 marked down by both strata", func() bool {
		return serverState(st[0].pool, mcs[3].Addr) == "down" && serverState(st[1].pool, mcs[3].Addr) == "down"
	})
	lose(3)
	wl.progress(300)
	mcs[3].Resume(t)
	ms.members[3].State, ms.members[3].Incarnation = shardmap.MemberReturning, 1
	publish()
	poll.Until(t, 60*time.Second, "server 3 flushed by both strata", func() bool {
		for _, s := range st {
			if inc, ok := s.pool.Flushed(mcs[3].Addr); !ok || inc != 1 || serverState(s.pool, mcs[3].Addr) != "up" {
				return false
			}
		}
		return true
	})
	ms.members[3].State = shardmap.MemberActive
	for _, h := range ms.held {
		delete(h, 3) // flushed: it holds nothing old any more
	}

	// Replicas of shards 0, 4, 8, 12 (owner 0) on server 2, then server 2
	// dies (kill -9): its replicas are dropped and its shards fail over.
	add(next(2), 0, 4, 8, 12)
	wl.progress(100)
	mcs[2].Stop()
	poll.Until(t, 60*time.Second, "server 2 marked down", func() bool {
		return serverState(st[0].pool, mcs[2].Addr) == "down" || serverState(st[1].pool, mcs[2].Addr) == "down"
	})
	lose(2)

	// Replicas onto the flushed server 3, among them of shards it was
	// replica of before it hung, then every replica leaves.
	var onto3 []int
	for sh, o := range ms.owner {
		if o != 3 && rs[sh] == nil {
			onto3 = append(onto3, sh)
		}
	}
	add(func(int) int { return 3 }, onto3...)
	var all []int
	for sh := range rs {
		all = append(all, sh)
	}
	drop(all...)

	hits, acked := wl.check()
	var fills, reads, failed uint64
	for i, s := range st {
		r := s.pool.Stats().Replicas
		t.Logf("strata %d: %d reads at replicas, %d fills (%d lost), %d writes failed at a replica", i, r.Reads, r.Fills, r.FillsLost, r.WriteFailed)
		fills, reads, failed = fills+r.Fills, reads+r.Reads, failed+r.WriteFailed
	}
	if fills == 0 || reads == 0 {
		t.Error("no replica read or fill: the serving step was not exercised")
	}
	if failed == 0 {
		t.Error("no write failed at a replica: the hung and dead replicas were not exercised")
	}
	if hits < 100 || acked < 100 {
		t.Errorf("only %d hits and %d acknowledged writes: the workload did not exercise the replicas", hits, acked)
	}
}
