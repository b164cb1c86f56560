package shards

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/placement/assign"
)

const hotShard = 5

// hot makes both agents report rate reads/s of hotShard (split between
// them) and 1/s of every other shard.
func (r *rig) hot(rate float64) {
	for _, a := range r.agents {
		a.Reads = make([]float64, testShards)
		for sh := range a.Reads {
			a.Reads[sh] = 0.5
		}
		a.Reads[hotShard] = rate / 2
	}
	r.report()
}

// replicasOf lists hotShard's replicas in p as (member address, state).
func replicasOf(p *Published, shard int) map[string]ReplicaState {
	out := map[string]ReplicaState{}
	for _, e := range p.Replicas {
		if e.Shard == shard {
			out[p.Members[e.Member].Addr] = e.State
		}
	}
	return out
}

// A hot shard gains read replicas one per period, each joining until
// every agent applied it, then serving; when its reads fall it loses them
// one per period, each leaving until every agent applied that, then
// recorded as a former holder: the replica never comes back to a server
// that held it before a flush.
func TestHotShardGainsAndLosesReplicas(t *testing.T) {
	r := newRig(t)
	r.cfg.MaxReplicas, r.cfg.ReplicaBand, r.cfg.Rebalance = 3, assign.Band{Low: 10, High: 100}, 10*time.Second
	l, _ := r.leader()
	r.mustRound(l, 0)
	r.applyAll()
	r.hot(300)
	if v := r.mustRound(l, 5*time.Second); v != 1 {
		t.Fatalf("scaled before a rebalance period: version %d", v)
	}
	if v := r.mustRound(l, 10*time.Second); v != 2 {
		t.Fatalf("no replica after a period at 300 reads/s: version %d", v)
	}
	_, p := r.published()
	reps := replicasOf(p, hotShard)
	if len(p.Replicas) != 1 || len(reps) != 1 {
		t.Fatalf("replicas %+v; want one, of shard %d", p.Replicas, hotShard)
	}
	first := p.Members[p.Replicas[0].Member].Addr
	if reps[first] != ReplicaJoining || first == p.Members[p.Owner[hotShard]].Addr {
		t.Fatalf("new replica on %s (owner %s) in state %q; want joining on another server", first, p.Members[p.Owner[hotShard]].Addr, reps[first])
	}
	if v := r.mustRound(l, 11*time.Second); v != 2 {
		t.Fatalf("a joining replica served before every agent applied it: version %d", v)
	}
	r.applyAll()
	r.mustRound(l, 12*time.Second)
	_, p = r.published()
	if replicasOf(p, hotShard)[first] != ReplicaServing {
		t.Fatalf("applied by all, the replica is %+v; want serving", p.Replicas)
	}
	top, err := p.Topology(3)
	if err != nil || len(top.Map.Replicas(hotShard)) != 1 {
		t.Fatalf("topology of a replicated map: %v, %+v", err, top.Map.Replicas(hotShard))
	}
	// 300 reads over two is still above 100: a third.
	r.applyAll()
	r.mustRound(l, 20*time.Second)
	r.applyAll()
	r.mustRound(l, 21*time.Second)
	_, p = r.published()
	reps = replicasOf(p, hotShard)
	if len(reps) != 2 || reps[first] != ReplicaServing {
		t.Fatalf("replicas %+v; want two serving", reps)
	}
	// The cap holds.
	r.applyAll()
	r.mustRound(l, 30*time.Second)
	if _, p = r.published(); len(p.Replicas) != 2 {
		t.Fatalf("%d replicas above max_replicas 3", len(p.Replicas)+1)
	}

	// Reads fall: one replica leaves per period, the newest first.
	r.hot(5)
	r.applyAll()
	r.mustRound(l, 40*time.Second)
	_, p = r.published()
	reps = replicasOf(p, hotShard)
	var second string
	for a, st := range reps {
		if a != first {
			second = a
			if st != ReplicaLeaving {
				t.Fatalf("the newest replica is %q; want leaving", st)
			}
		}
	}
	if reps[first] != ReplicaServing {
		t.Fatalf("the oldest replica is %q; want still serving", reps[first])
	}
	r.mustRound(l, 41*time.Second)
	if _, p = r.published(); replicasOf(p, hotShard)[second] != ReplicaLeaving {
		t.Fatal("a leaving replica was removed before every agent applied it")
	}
	r.applyAll()
	r.mustRound(l, 42*time.Second)
	_, p = r.published()
	if _, ok := replicasOf(p, hotShard)[second]; ok || !p.formerOwner(second, hotShard) {
		t.Fatalf("applied by all, the leaving replica is still listed (%+v) or not recorded as a former holder (%v)", p.Replicas, p.Former)
	}
	r.applyAll()
	r.mustRound(l, 50*time.Second)
	r.applyAll()
	r.mustRound(l, 51*time.Second)
	_, p = r.published()
	if len(p.Replicas) != 0 || !p.formerOwner(first, hotShard) {
		t.Fatalf("cold again: replicas %+v, former %v; want none and both recorded", p.Replicas, p.Former)
	}

	// Hot again: only the one server that never held the shard may take
	// a replica; the two former holders wait for a flush.
	r.hot(1000)
	for _, at := range []time.Duration{60, 61, 70, 71} {
		r.applyAll()
		r.mustRound(l, at*time.Second)
	}
	_, p = r.published()
	reps = replicasOf(p, hotShard)
	if len(reps) != 1 {
		t.Fatalf("hot again: replicas %+v; want exactly one, on the server that never held the shard", reps)
	}
	for a := range reps {
		if a == first || a == second {
			t.Fatalf("a replica went back to %s, which held the shard before, without a flush", a)
		}
	}
}

// A replica's server dying drops the replica; its shard's owner dying
// turns the replicas leaving in the failover's map, or drops the one
// whose server becomes the new owner.
func TestReplicasFollowFailover(t *testing.T) {
	r := newRig(t)
	r.cfg.MaxReplicas, r.cfg.ReplicaBand, r.cfg.Rebalance = 4, assign.Band{Low: 10, High: 100}, 10*time.Second
	l, _ := r.leader()
	r.mustRound(l, 0)
	r.applyAll()
	r.hot(10000)
	for _, at := range []time.Duration{10, 11, 20, 21, 30, 31} {
		r.mustRound(l, at*time.Second)
		r.applyAll()
	}
	_, p := r.published()
	if len(replicasOf(p, hotShard)) != 3 {
		t.Fatalf("replicas %+v; want three, on every other server", p.Replicas)
	}
	owner := r.index(p.Members[p.Owner[hotShard]].Addr)
	var victim int
	for i := range r.servers {
		if i != owner {
			victim = i
			break
		}
	}
	// The replica's server dies.
	r.agents["a"].Unreachable = []string{r.servers[victim].Addr}
	r.report()
	for _, at := range []time.Duration{32, 33, 35} {
		r.mustRound(l, at*time.Second, victim)
	}
	_, p = r.published()
	if r.state(p, victim) != assign.Down {
		t.Fatalf("server %d not declared down", victim)
	}
	if _, ok := replicasOf(p, hotShard)[r.servers[victim].Addr]; ok {
		t.Fatal("a replica on a dead server is still listed")
	}
	if len(replicasOf(p, hotShard)) != 2 {
		t.Fatalf("replicas %+v; want the two on live servers", replicasOf(p, hotShard))
	}
	// The owner dies: its shard fails over; its replicas leave, or give
	// way to the new owner.
	r.agents["a"].Unreachable = []string{r.servers[victim].Addr, r.servers[owner].Addr}
	r.report()
	for _, at := range []time.Duration{36, 37, 39} {
		r.mustRound(l, at*time.Second, victim, owner)
	}
	_, p = r.published()
	if r.state(p, owner) != assign.Down {
		t.Fatalf("owner %d not declared down", owner)
	}
	newOwner := p.Members[p.Owner[hotShard]].Addr
	for a, st := range replicasOf(p, hotShard) {
		if a == newOwner || st != ReplicaLeaving {
			t.Fatalf("after the owner's failover, replica on %s (new owner %s) is %q; want leaving, never on the owner", a, newOwner, st)
		}
	}
}

// A replica step published while a batch of moves is in handoff does not
// restart the batch's grace window: frequent replica steps must not hold
// moves back.
func TestReplicaStepsKeepTheMovePhaseClock(t *testing.T) {
	r := newRig(t)
	r.cfg.MaxReplicas, r.cfg.ReplicaBand, r.cfg.Rebalance = 2, assign.Band{Low: 10, High: 100}, time.Second
	l, _ := r.leader()
	view := NewView(r.st, map[string]TierInfo{"l2": {Shards: testShards, Members: addrs(r.servers)}})
	r.mustRound(l, 0)
	r.applyAll()
	if err := view.SetDrain(r.ctx, "l2", r.servers[1].Addr, true); err != nil {
		t.Fatal(err)
	}
	r.mustRound(l, time.Second)
	r.applyAll()
	r.mustRound(l, 2*time.Second)
	_, p := r.published()
	if p.Phase != Handoff {
		t.Fatalf("phase %q, want handoff", p.Phase)
	}
	// A shard that is not moving (a moving one gets no replica).
	moving := map[int]bool{}
	for _, mv := range p.Moves {
		moving[mv.Shard] = true
	}
	hot := -1
	for sh, o := range p.Owner {
		if p.Members[o].Addr != r.servers[1].Addr && !moving[sh] {
			hot = sh
			break
		}
	}
	for _, a := range r.agents {
		a.Reads = make([]float64, testShards)
		a.Reads[hot] = 500
	}
	r.applyAll()
	r.mustRound(l, 3*time.Second)
	if _, p = r.published(); len(replicasOf(p, hot)) != 1 || p.Phase != Handoff {
		t.Fatalf("replicas %+v in phase %q; want one joining during handoff", p.Replicas, p.Phase)
	}
	r.applyAll()
	r.mustRound(l, 4*time.Second)
	r.applyAll()
	r.mustRound(l, 7*time.Second) // handoff published at 2s, grace 5s
	if _, p = r.published(); p.Phase != Settle {
		t.Fatalf("phase %q at the end of the grace window; want settle", p.Phase)
	}
}
