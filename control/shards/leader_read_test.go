package shards

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
)

// A round reads the tier's rows in one List, whatever it finds there.
func TestRoundReadsTheTierOnce(t *testing.T) {
	r, c, l := countedLeader(t)
	r.mustRound(l, 0) // publishes version 1
	for i := 1; i <= 3; i++ {
		c.reads = 0
		r.mustRound(l, time.Duration(i)*time.Second)
		if c.reads != 1 {
			t.Fatalf("round %d: %d store reads, want 1", i, c.reads)
		}
	}
}

func TestSplitTierRows(t *testing.T) {
	rows := []store.Row{
		{Key: "shards/l2/agents/a", Value: []byte("{}")},
		{Key: "shards/l2/convert-paused", Value: []byte("1")},
		{Key: "shards/l2/drain/10.0.0.1:11211", Value: []byte("1")},
		{Key: "shards/l2/maintenance/10.0.0.2:11211", Value: []byte("1")},
		{Key: "shards/l2/map", Value: []byte("m")},
		{Key: "shards/l2/unknown-kind", Value: []byte("x")},
	}
	rs := splitTierRows("l2", rows)
	if string(rs.mapRow.Value) != "m" || len(rs.agents) != 1 || !rs.paused ||
		!rs.drains["10.0.0.1:11211"] || len(rs.drains) != 1 || !rs.maint["10.0.0.2:11211"] || len(rs.maint) != 1 {
		t.Fatalf("%+v", rs)
	}
	if rs := splitTierRows("l2", nil); rs.mapRow.Exists() || rs.paused || rs.drains == nil || rs.maint == nil {
		t.Fatalf("no rows: %+v", rs)
	}
}

// countedLeader is a rig's leader of l2 on a store client that counts
// its reads.
func countedLeader(t *testing.T) (*rig, *readCounter, *Leader) {
	t.Helper()
	r := newRig(t)
	c := &readCounter{MemoryClient: r.mem.Connect()}
	t.Cleanup(func() { _ = c.Close() })
	sess, err := c.NewSession(r.ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	lead, err := c.Campaign(r.ctx, sess, ElectionName("l2"), "test")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLeader(r.cfg, c, lead, Wire{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r, c, l
}

// readCounter counts a leader's store reads; only the round's goroutine
// uses it.
type readCounter struct {
	*store.MemoryClient
	reads int
}

func (c *readCounter) Get(ctx context.Context, key string) (store.Row, int64, error) {
	c.reads++
	return c.MemoryClient.Get(ctx, key)
}

func (c *readCounter) List(ctx context.Context, prefix string) ([]store.Row, int64, error) {
	c.reads++
	return c.MemoryClient.List(ctx, prefix)
}

// A round told nothing changed decides on the previous round's read and
// reads nothing, unless that round published or there was none.
func TestUnchangedRoundReusesTheRead(t *testing.T) {
	r, c, l := countedLeader(t)
	probe := map[string]bool{}
	for _, s := range r.servers {
		probe[s.Addr] = true
	}
	round := func(at time.Duration, unchanged bool, wantReads int) uint64 {
		t.Helper()
		c.reads = 0
		v, err := l.Round(r.ctx, Observation{Now: r.now.Add(at), Probe: probe, Unchanged: unchanged})
		if err != nil {
			t.Fatal(err)
		}
		if c.reads != wantReads {
			t.Fatalf("round at %v (unchanged %v): %d reads, want %d", at, unchanged, c.reads, wantReads)
		}
		return v
	}
	if v := round(0, true, 2); v != 1 { // no read yet: it reads, and publishes (a read of the version)
		t.Fatalf("version %d after the first round", v)
	}
	round(time.Second, true, 1) // it published: it reads again
	round(2*time.Second, true, 0)
	round(3*time.Second, true, 0)
	round(4*time.Second, false, 1)
}

// The Runner's watch says unchanged only while it delivers and nothing
// under the tier's prefix changed since it was last asked.
func TestTierWatch(t *testing.T) {
	st := store.NewMemory(store.MemoryOptions{}).Connect()
	defer st.Close()
	r := &Runner{cfg: RunnerConfig{Leader: LeaderConfig{Tier: "l2"}, ProbeInterval: time.Millisecond}, st: st}
	var tw tierWatch
	if tw.unchanged() {
		t.Fatal("unchanged before any watch")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); r.watchTier(ctx, &tw) }()
	defer func() { cancel(); <-done }()
	poll.Until(t, 10*time.Second, "the watch delivering", tw.live.Load)
	tw.unchanged() // takes the first batch
	if !tw.unchanged() {
		t.Fatal("changed with no write")
	}
	if _, err := st.Txn(t.Context(), nil, []store.Op{store.Put(drainKey("l2", "10.0.0.1:11211"), []byte("1"))}); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "the drain row seen as a change", func() bool { return !tw.unchanged() })
	if !tw.unchanged() {
		t.Fatal("changed twice for one write")
	}
}

// hasLoads says whether sumLoads sums anything, which the periodic plan
// waits for.
func TestHasLoadsAgreesWithSumLoads(t *testing.T) {
	for _, reps := range [][]Report{
		nil,
		{{ID: "a"}},
		{{ID: "a", Requests: []float64{1}, Bytes: []float64{1}}},
		{{ID: "a", Requests: []float64{0, 0}}},
		{{ID: "a"}, {ID: "b", Requests: []float64{0, 0}, Bytes: []float64{0, 0}}},
	} {
		req, _ := sumLoads(reps, 2)
		if hasLoads(reps, 2) != (req != nil) {
			t.Errorf("%+v: hasLoads %v, sumLoads %v", reps, hasLoads(reps, 2), req)
		}
	}
}

// Rounds on the same map with the same members judge the same reconciled
// copy of it: an idle leader does not copy the map every round. A change
// of members, or a newly published map, makes a new one.
func TestIdleRoundsReuseTheReconciledMap(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	r.mustRound(l, 0) // publishes version 1
	r.mustRound(l, time.Second)
	seen := l.seen
	r.mustRound(l, 2*time.Second)
	if l.seen != seen {
		t.Fatal("a round on an unchanged map copied it again")
	}
	l.SetMembers(r.servers[:3])
	r.mustRound(l, 3*time.Second)
	if l.seen == seen {
		t.Fatal("a round after a member left judged the old members")
	}
	for _, m := range l.seen.Members {
		if m.Addr == r.servers[3].Addr {
			t.Fatalf("the member that left is in the reconciled map: %+v", l.seen.Members)
		}
	}
}

// An idle leader's rounds build their maps in the room of the one before,
// which none of them published; a round that publishes hands its map over
// and the next builds anew.
func TestIdleRoundsBuildInTheSpareMap(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	r.mustRound(l, 0) // publishes version 1
	r.mustRound(l, time.Second)
	spare := l.mem.spare
	if spare == nil {
		t.Fatal("a round that published nothing kept no spare map")
	}
	r.mustRound(l, 2*time.Second)
	if l.mem.spare != spare {
		t.Fatal("an idle round built its map anew")
	}
	// Server 0 fails, by the leader's probes and an agent's report: the
	// failover's round publishes the map it built, and keeps no spare.
	r.agents["b"] = &Report{ID: "b", Applied: 1, Unreachable: []string{r.servers[0].Addr}}
	r.report()
	r.mustRound(l, 3*time.Second, 0)
	if v := r.mustRound(l, 6*time.Second, 0); v != 2 {
		t.Fatalf("version %d after the failure, want the failover's 2", v)
	}
	if l.mem.spare != nil {
		t.Fatal("the published map stayed the spare")
	}
}
