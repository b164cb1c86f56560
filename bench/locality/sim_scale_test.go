package locality

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/placement"
)

// TestSimulateColdMuShards is the bench's 10,002-μ-shard row in the
// simulation: the bench's policy for a 32 s day, scaled so that b's peak
// (12.8 s) is the simulation's eight peak hours (×2250), each μ-shard
// used 0.23 times a (bench) second, a sixth of the users following the
// peak. At that rate an owner scores about 0.5. With the evidence asked
// only as a factor of the owner's score, and returns asking the same,
// one foreign read moved μ-shards away from their users: 7.80 % remote
// after the first day, 15,890 moves. Asking more than one access, and
// less of a return: 6.45 %, 11,731 moves.
//
// The bench's foreign reads miss about half the time (55 % measured at
// 10,002 μ-shards), and the reader's fill is a second access a round trip
// later: with those fills, more than one access moved μ-shards again
// (8.43 %, 14,988 moves). Asking more than one visit too: 7.15 %, 11,632
// moves, as many as without fills; the rest over 6.45 % is the fills' own
// requests, which go where the read went. With the shift rules
// (placement.Shift: a claim of a pair that shifts needs one visit, late
// claims are held, and a return does not wait migrate_after): 6.59 %,
// 11,666 moves.
//
// On the first day followers leave home for the first time: their moves
// are claims, not returns, and each waits for a second visit unless its
// pair of regions shifts: 6.93 % remote that day and 2,173 moves before the
// shift rules, 6.17 % and 2,199 with them.
func TestSimulateColdMuShards(t *testing.T) {
	const k = 2250
	p := placement.DefaultLocalityPolicy()
	p.HalfLife, p.MigrateAfter = 1600*time.Millisecond*k, 800*time.Millisecond*k
	p.MinInterval, p.MaxTTL = 11*time.Second*k, 10*time.Second*k
	p.Rate, p.Burst = 1000, 1e6
	rep, err := Simulate(context.Background(), SimConfig{MuShards: 10002, Days: 4, Interval: 400 * time.Millisecond * k, Rounds: 4,
		PerMinute: 0.23 * 60 / k, ForeignFills: 0.55, Followers: 1.0 / 6, Travellers: 1e-9, Policy: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.RemoteFractionAfterDay > 0.07 || rep.Moves == 0 || rep.Moves > 13000 {
		t.Fatalf("remote %.2f %% after the first day (want under 7 %%), %d moves (want some, under 13,000)", 100*rep.RemoteFractionAfterDay, rep.Moves)
	}
	t.Logf("remote %.2f %% (%.2f %% after the first day), %d moves, %d returns", 100*rep.RemoteFraction, 100*rep.RemoteFractionAfterDay, rep.Moves, rep.Returns)

	day, err := Simulate(context.Background(), SimConfig{MuShards: 10002, Days: 1, Interval: 400 * time.Millisecond * k, Rounds: 4,
		PerMinute: 0.23 * 60 / k, ForeignFills: 0.55, Followers: 1.0 / 6, Travellers: 1e-9, Policy: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if day.RemoteFraction > 0.065 {
		t.Fatalf("remote %.2f %% on the first day (want under 6.5 %%), %d moves", 100*day.RemoteFraction, day.Moves)
	}
	t.Logf("first day: remote %.2f %%, %d moves, %d returns", 100*day.RemoteFraction, day.Moves, day.Returns)
}
