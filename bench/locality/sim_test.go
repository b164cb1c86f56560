package locality

import (
	"context"
	"testing"
	"time"
)

// TestSimulate: a small simulation runs the real leader and counters,
// its followers and travellers move, and the same seed gives the same
// figures (virtual time, seeded workload).
func TestSimulate(t *testing.T) {
	cfg := SimConfig{MuShards: 1500, Days: 2, Interval: time.Hour, Seed: 3}
	a, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Moves != b.Moves || a.Requests != b.Requests || a.RemoteFraction != b.RemoteFraction || a.CounterBytes != b.CounterBytes {
		t.Fatalf("same seed, different runs: %+v and %+v", a, b)
	}
	// 10 % followers move twice a day (a little under 300 moves a day),
	// travellers a little: the run must show them moving, and no more
	// than a few moves a μ-shard.
	if a.Moves < 300 || a.MovesPerMuShard > 1 {
		t.Fatalf("%d moves (%.2f a μ-shard)", a.Moves, a.MovesPerMuShard)
	}
	if a.RemoteFraction <= 0 || a.RemoteFraction > 0.1 || a.CounterBytes == 0 || a.Decisions == 0 {
		t.Fatalf("report %+v", a)
	}
	if _, err := Simulate(context.Background(), SimConfig{MuShards: 2}); err == nil {
		t.Fatal("2 μ-shards accepted")
	}
}
