package shards

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// stubPool is a Pool that holds nothing and reports no load.
type stubPool struct{}

func (stubPool) ApplyTopology(shardmap.Topology) error { return nil }
func (stubPool) ShardLoad(*Load)                       {}
func (stubPool) Unreachable() []string                 { return nil }

// closeCounter counts Close calls on a memory store client.
type closeCounter struct {
	*store.MemoryClient
	closes atomic.Int32
}

func (c *closeCounter) Close() error {
	c.closes.Add(1)
	return c.MemoryClient.Close()
}

func planeConfig(lead bool) PlaneConfig {
	return PlaneConfig{
		Candidate: "serve-1", Lead: lead,
		Agent: AgentConfig{ReportInterval: time.Second, SessionTTL: 5},
		Runner: RunnerConfig{
			Leader:        LeaderConfig{Detection: time.Second, Rebalance: time.Minute, Grace: time.Second, MaxMoves: 1},
			ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 50 * time.Millisecond, SessionTTL: 5,
		},
	}
}

// A Plane runs an agent per tier with a pool here and a runner per tier
// when it leads; SetMembers reaches the view; Stop closes the store once.
func TestPlaneComposesTheTiers(t *testing.T) {
	st := &closeCounter{MemoryClient: store.NewMemory(store.MemoryOptions{}).Connect()}
	members := []shardmap.Server{{Addr: "127.0.0.1:1", Weight: 1}, {Addr: "127.0.0.1:2", Weight: 1}}
	initial, err := shardmap.Rendezvous(1, 4, members)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlane(planeConfig(true), st, []ManagedTier{
		{Name: "l1", Pool: stubPool{}, Shards: 4, Initial: initial, Members: members, Settle: time.Second},
		{Name: "l2", Shards: 4, Initial: initial, Members: members, Settle: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.agents) != 1 || len(p.runners) != 2 {
		t.Fatalf("%d agents, %d runners; want 1 and 2", len(p.agents), len(p.runners))
	}
	if !p.Manages("l1") || !p.Manages("l2") || p.Manages("l3") || (*Plane)(nil).Manages("l1") {
		t.Fatal("Manages")
	}
	p.Start()
	p.SetMembers("l2", members[:1])
	if info, _ := p.View().tier("l2"); !reflect.DeepEqual(info.Members, []string{"127.0.0.1:1"}) {
		t.Fatalf("view members %v", info.Members)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := st.closes.Load(); n != 1 {
		t.Fatalf("store closed %d times", n)
	}
}

// A Plane that cannot be built has closed the store it was given.
func TestNewPlaneClosesTheStoreOnError(t *testing.T) {
	st := &closeCounter{MemoryClient: store.NewMemory(store.MemoryOptions{}).Connect()}
	cfg := planeConfig(true)
	cfg.Runner.ProbeInterval = 0
	if _, err := NewPlane(cfg, st, []ManagedTier{{Name: "l2", Shards: 4}}); err == nil {
		t.Fatal("built without a probe interval")
	}
	if n := st.closes.Load(); n != 1 {
		t.Fatalf("store closed %d times", n)
	}
}
