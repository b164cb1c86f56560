package shards

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// poolAdapter is what cmd/strata does for a real pool, minimally.
type poolAdapter struct{ p *memcached.Pool }

func (a poolAdapter) ApplyTopology(t shardmap.Topology) error { return a.p.ApplyTopology(t) }
func (a poolAdapter) ShardLoad() ([]uint64, []uint64, []uint64) {
	l := a.p.ShardLoad()
	return l.Requests, l.Bytes, l.Reads
}
func (a poolAdapter) Unreachable() []string { return nil }

// An agent applies each published map to a real managed pool and reports
// the version it applied, which is what the leader waits on.
func TestAgentAppliesAndReports(t *testing.T) {
	r := newRig(t)
	var list []memcached.Server
	for _, s := range r.servers {
		list = append(list, memcached.Server{Addr: s.Addr, Weight: 1})
	}
	pool, err := memcached.New(memcached.Config{Servers: list, Shards: testShards, Managed: true}, idleLoops{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ag, err := NewAgent(AgentConfig{Tier: "l2", ID: "agent-1", Shards: testShards, ReportInterval: time.Hour, SessionTTL: 60}, r.st, poolAdapter{pool})
	if err != nil {
		t.Fatal(err)
	}
	ag.Start()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ag.Stop(ctx); err != nil {
			t.Error(err)
		}
	}()
	// Only this agent reports (the rig's rows go).
	for id := range r.agents {
		if _, err := store.DeleteRow(r.ctx, r.st, agentsPrefix("l2")+id); err != nil {
			t.Fatal(err)
		}
	}
	r.agents = map[string]*Report{}
	l, _ := r.leader()
	r.mustRound(l, 0)
	reported := func(v uint64) bool {
		reps, err := readReports(r.ctx, r.st, "l2")
		if err != nil {
			return false
		}
		for _, rep := range reps {
			if rep.ID == "agent-1" {
				return rep.Applied == v
			}
		}
		return false
	}
	poll.Until(t, 10*time.Second, "version 1 applied and reported", func() bool { return ag.Applied() == 1 && reported(1) })
	if v := pool.Topology().Version(); v != 1 {
		t.Fatalf("pool at version %d", v)
	}
	// A failover (another strata agrees that server 0 is unreachable):
	// the agent follows, the leader sees it.
	r.agents["b"] = &Report{ID: "b", Applied: 1, Unreachable: []string{r.servers[0].Addr}}
	r.report()
	r.mustRound(l, time.Second, 0)
	r.mustRound(l, 4*time.Second, 0)
	poll.Until(t, 10*time.Second, "version 2 applied and reported", func() bool { return ag.Applied() == 2 && reported(2) })
	if c := pool.ShardMap().Counts(); c[0] != 0 {
		t.Fatalf("the pool still routes %d shards to the failed server", c[0])
	}
}

// idleLoops are event loops that never serve: the agent drives the pool's
// topology, which needs no connection, so the pool is never started.
type idleLoops struct{}

func (idleLoops) NumLoops() int { return 1 }
func (idleLoops) Attach(_ context.Context, _ int, nc net.Conn, _ memcached.Handler) error {
	_ = nc.Close()
	return errors.New("idle loops")
}
func (idleLoops) Run(int, func())           {}
func (idleLoops) Join(memcached.User) error { return nil }
