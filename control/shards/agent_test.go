package shards

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync/atomic"
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
func (a poolAdapter) ShardLoad(l *Load)                       { a.p.ShardLoad((*memcached.ShardLoad)(l)) }
func (a poolAdapter) Unreachable() []string                   { return nil }

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
	t.Cleanup(func() { _ = pool.Close() }) // after the agent's stop
	ag, err := NewAgent(AgentConfig{Tier: "l2", ID: "agent-1", Shards: testShards, ReportInterval: time.Hour, SessionTTL: 60}, r.st, poolAdapter{pool})
	if err != nil {
		t.Fatal(err)
	}
	startAgent(t, ag)
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

// An idle agent does not rewrite its row: reports that say the same thing
// (same map, nobody down, same rates) are put once, and a change of load
// is put at the next report.
func TestAgentSkipsUnchangedReports(t *testing.T) {
	mem := store.NewMemory(store.MemoryOptions{})
	st := &countingStore{MemoryClient: mem.Connect()}
	t.Cleanup(func() { _ = st.Close() }) // after the agent's stop
	pool := &fakeLoadPool{}
	ag, err := NewAgent(AgentConfig{Tier: "l2", ID: "agent-1", Shards: 2, ReportInterval: time.Millisecond, SessionTTL: 60}, st, pool)
	if err != nil {
		t.Fatal(err)
	}
	startAgent(t, ag)
	// The first report has no rates, the second zero rates; every later
	// one is the second again.
	poll.Until(t, 10*time.Second, "twenty reports made", func() bool { return pool.calls.Load() >= 20 })
	if n := st.txns.Load(); n != 2 {
		t.Fatalf("%d reports written while nothing changed, want 2", n)
	}
	pool.requests.Add(100)
	poll.Until(t, 10*time.Second, "the load reported", func() bool { return st.txns.Load() >= 3 })
}

// rates are written in the room given: every entry, so a shard idle since
// the last report, or whose count went back (a restarted pool), reads 0
// whatever the room held.
func TestRatesReuseRoom(t *testing.T) {
	room := []float64{9, 9, 9, 9, 9}
	got := rates(room, []uint64{30, 7, 4, 0}, []uint64{10, 7, 5}, 2)
	if want := []float64{10, 0, 0, 0}; !slices.Equal(got, want) {
		t.Fatalf("rates %v, want %v", got, want)
	}
	if &got[0] != &room[0] {
		t.Error("rates allocated though the room sufficed")
	}
	if got := rates(room[:1], []uint64{3, 1}, []uint64{0, 0}, 4); !slices.Equal(got, []float64{0.8, 0.3}) {
		t.Fatalf("rates in too little room %v, want [0.8 0.3]", got)
	}
}

func TestSameReport(t *testing.T) {
	base := Report{ID: "a", Applied: 3, Unreachable: []string{"x"}, Requests: []float64{0, 1}, Bytes: []float64{0, 2}}
	if !sameReport(base, base) {
		t.Error("a report differs from itself")
	}
	noRates := Report{ID: "a", Applied: 3, Unreachable: []string{"x"}, Requests: []float64{}}
	if !sameReport(noRates, Report{ID: "a", Applied: 3, Unreachable: []string{"x"}}) {
		t.Error("empty and absent rates encode alike but differ")
	}
	for name, change := range map[string]func(*Report){
		"applied":     func(r *Report) { r.Applied++ },
		"unreachable": func(r *Report) { r.Unreachable = nil },
		"requests":    func(r *Report) { r.Requests = []float64{0, 1.1} },
		"bytes":       func(r *Report) { r.Bytes = []float64{0} },
		"reads":       func(r *Report) { r.Reads = []float64{0, 0} },
		"id":          func(r *Report) { r.ID = "b" },
	} {
		r := base
		change(&r)
		if sameReport(base, r) {
			t.Errorf("a report with another %s is the same", name)
		}
	}
}

// countingStore counts the agent's writes.
type countingStore struct {
	*store.MemoryClient
	txns atomic.Int64
}

func (s *countingStore) Txn(ctx context.Context, c []store.Cond, o []store.Op) (store.TxnResult, error) {
	s.txns.Add(1)
	return s.MemoryClient.Txn(ctx, c, o)
}

// fakeLoadPool is a pool of two shards whose request count the test sets.
type fakeLoadPool struct {
	requests atomic.Uint64
	calls    atomic.Int64
}

func (p *fakeLoadPool) ApplyTopology(shardmap.Topology) error { return nil }
func (p *fakeLoadPool) Unreachable() []string                 { return nil }
func (p *fakeLoadPool) ShardLoad(l *Load) {
	p.calls.Add(1)
	*l = Load{Requests: []uint64{p.requests.Load(), 0}, Bytes: []uint64{0, 0}}
}

// startAgent starts ag and stops it (5 s at most) when the test ends.
func startAgent(t *testing.T, ag *Agent) {
	t.Helper()
	ag.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ag.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
}
