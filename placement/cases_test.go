package placement

import (
	"reflect"
	"testing"
)

// one builds a problem on one metric: caps per server, loads per shard,
// owner per shard (one replica each).
func one(caps, loads []float64, owner []int) *Problem {
	p := &Problem{Metrics: 1}
	for _, c := range caps {
		p.Servers = append(p.Servers, Server{Capacity: []float64{c}})
	}
	for i, l := range loads {
		p.Shards = append(p.Shards, Shard{Load: []float64{l}, Replicas: 1, Region: -1})
		p.Assignment = append(p.Assignment, []int{owner[i]})
	}
	return p
}

func solveOK(t *testing.T, p *Problem, o Options) *Result {
	t.Helper()
	res, err := Solve(p, o)
	if err != nil {
		t.Fatal(err)
	}
	checkHard(t, p, o, res)
	return res
}

func wantMoves(t *testing.T, res *Result, want ...Move) {
	t.Helper()
	if len(want) == 0 {
		want = nil
	}
	if !reflect.DeepEqual(res.Moves, want) {
		t.Fatalf("moves %+v, want %+v", res.Moves, want)
	}
}

// Two servers of 10; shards 5, 3 and 2 all on server 0 (utilisation 1.0,
// mean 0.5, balance threshold 0.55). Moving the 5 cures both the
// utilisation and the balance violation in one move, the minimum.
func TestCaseOneMoveCuresTwoGoals(t *testing.T) {
	res := solveOK(t, one([]float64{10, 10}, []float64{5, 3, 2}, []int{0, 0, 0}), Options{})
	wantMoves(t, res, Move{Shard: 0, From: 0, To: 1})
	if res.MinMoves != 1 || res.After.Total() != 0 {
		t.Fatalf("min moves %d, violations after %v", res.MinMoves, res.After.Violations)
	}
	if res.Before.Violations[GoalUtilization] != 1 || res.Before.Violations[GoalBalance] != 1 {
		t.Fatalf("violations before %v", res.Before.Violations)
	}
}

// Draining server 2 holds 20 and 10; servers 0 and 1 hold 30 and 40 of
// 100 each. Largest first: the 20 goes to the roomier server 0 (to 50),
// then the 10 to server 1 (to 50). Both end exactly at the mean.
func TestCaseDrainLargestFirst(t *testing.T) {
	p := one([]float64{100, 100, 100}, []float64{30, 40, 10, 20}, []int{0, 1, 2, 2})
	p.Servers[2].Draining = true
	res := solveOK(t, p, Options{})
	wantMoves(t, res, Move{Shard: 2, From: 2, To: 1}, Move{Shard: 3, From: 2, To: 0})
	if res.After.Total() != 0 || res.MinMoves != 2 {
		t.Fatalf("violations after %v, min moves %d", res.After.Violations, res.MinMoves)
	}
	if res.After.MaxOverMean[0] != 1 {
		t.Fatalf("max/mean %v", res.After.MaxOverMean)
	}
}

// Server 3 died holding 25 and 5. Emergency mode places the 25 on the
// emptiest server (0, at 10), and the 5 on the emptiest server that has
// not yet taken one of the dead server's shards (1, at 20), so recovery
// reads in parallel. It moves nothing else.
func TestCaseEmergencyFailover(t *testing.T) {
	p := one([]float64{100, 100, 100, 100}, []float64{10, 20, 30, 25, 5}, []int{0, 1, 2, 3, 3})
	p.Servers[3].Dead = true
	res := solveOK(t, p, Options{Mode: Emergency})
	wantMoves(t, res, Move{Shard: 3, From: 3, To: 0}, Move{Shard: 4, From: 3, To: 1})
	if res.Before.Violations[GoalUnplaced] != 2 || res.After.Violations[GoalUnplaced] != 0 {
		t.Fatalf("unplaced %d -> %d", res.Before.Violations[GoalUnplaced], res.After.Violations[GoalUnplaced])
	}
}

// Two replicas share zone 0; the only other zone has server 2. The first
// replica moves there, and nothing else moves: the lone shard cannot be
// balanced (whoever holds it is above the mean), and no move that merely
// shifts that violation is taken.
func TestCaseZoneSpread(t *testing.T) {
	p := &Problem{Metrics: 1,
		Servers: []Server{
			{Capacity: []float64{10}, Zone: 0},
			{Capacity: []float64{10}, Zone: 0},
			{Capacity: []float64{10}, Zone: 1},
		},
		Shards:     []Shard{{Load: []float64{1}, Replicas: 2, Region: -1}},
		Assignment: [][]int{{0, 1}},
	}
	res := solveOK(t, p, Options{})
	wantMoves(t, res, Move{Shard: 0, Replica: 0, From: 0, To: 2})
	if res.Before.Violations[GoalZone] != 1 || res.After.Violations[GoalZone] != 0 {
		t.Fatalf("zone violations %d -> %d", res.Before.Violations[GoalZone], res.After.Violations[GoalZone])
	}
}

// A shard that prefers region 1 leaves region 0 for the only server there.
func TestCaseRegionPreference(t *testing.T) {
	p := one([]float64{100, 100, 100}, []float64{10, 10, 10}, []int{0, 1, 0})
	p.Servers[2].Region = 1
	p.Shards[2].Region = 1
	res := solveOK(t, p, Options{})
	wantMoves(t, res, Move{Shard: 2, From: 0, To: 2})
	if res.After.Total() != 0 {
		t.Fatalf("violations after %v", res.After.Violations)
	}
}

// An assignment without violations yields no moves: churn is spent only
// on fixing something.
func TestCaseBalancedInputStays(t *testing.T) {
	res := solveOK(t, one([]float64{10, 10, 10, 10}, []float64{3, 2, 4, 1, 2, 3, 1, 4}, []int{0, 0, 1, 1, 2, 2, 3, 3}), Options{})
	if res.Before.Total() != 0 {
		t.Fatalf("violations before %v", res.Before.Violations)
	}
	wantMoves(t, res)
}

// Server 0 is hot on metric 0 and server 1 on metric 1; any single move
// makes its destination hot, but exchanging a metric-0 shard for a
// metric-1 shard leaves both at the mean.
func TestCaseSwap(t *testing.T) {
	p := &Problem{Metrics: 2,
		Servers: []Server{{Capacity: []float64{10, 10}}, {Capacity: []float64{10, 10}}},
		Shards: []Shard{
			{Load: []float64{4, 1}, Replicas: 1, Region: -1},
			{Load: []float64{4, 1}, Replicas: 1, Region: -1},
			{Load: []float64{1, 4}, Replicas: 1, Region: -1},
			{Load: []float64{1, 4}, Replicas: 1, Region: -1},
		},
		Assignment: [][]int{{0}, {0}, {1}, {1}},
	}
	res := solveOK(t, p, Options{})
	wantMoves(t, res, Move{Shard: 0, From: 0, To: 1}, Move{Shard: 2, From: 1, To: 0})
	if res.After.Total() != 0 || res.After.MaxOverMean[0] != 1 || res.After.MaxOverMean[1] != 1 {
		t.Fatalf("after %v, max/mean %v", res.After.Violations, res.After.MaxOverMean)
	}
}

// The total move cap stops a drain after one move; the per-server cap
// counts both ends of a move.
func TestCaseMoveCaps(t *testing.T) {
	p := one([]float64{100, 100, 100}, []float64{30, 40, 10, 20}, []int{0, 1, 2, 2})
	p.Servers[2].Draining = true
	res := solveOK(t, p, Options{MaxMoves: 1})
	wantMoves(t, res, Move{Shard: 3, From: 2, To: 0})
	if res.After.Violations[GoalDrain] != 1 {
		t.Fatalf("drain violations after %d", res.After.Violations[GoalDrain])
	}
	res = solveOK(t, p, Options{MaxMovesPerServer: 1})
	wantMoves(t, res, Move{Shard: 3, From: 2, To: 0})
}

// Invalid entries are unplaced replicas: out of range, repeated, beyond
// Replicas (dropped). A missing shard list is all unplaced.
func TestCaseInvalidAssignment(t *testing.T) {
	p := one([]float64{100, 100, 100}, []float64{10, 10, 10}, []int{0, 1, 2})
	p.Shards[0].Replicas = 2
	p.Shards[1].Replicas = 2
	p.Assignment = [][]int{{7, 0, 1}, {1, 1}}
	res := solveOK(t, p, Options{})
	if res.Before.Violations[GoalUnplaced] != 3 {
		t.Fatalf("unplaced before %d, want 3 (index 7, the repeated 1, shard 2)", res.Before.Violations[GoalUnplaced])
	}
	if res.After.Violations[GoalUnplaced] != 0 || res.Assignment[0][1] != 0 || res.Assignment[1][0] != 1 {
		t.Fatalf("after %v assignment %v", res.After.Violations, res.Assignment)
	}
	if res.MinMoves != 3 || len(res.Moves) != 3 {
		t.Fatalf("min moves %d, moves %+v", res.MinMoves, res.Moves)
	}
}

// Emergency mode binds only the hard constraints, yet breaks ties among
// allowed servers by region preference before room: the shard of dead
// server 2 that prefers region 1 goes to server 1 although server 0 is
// emptier; the one without a preference goes to the emptiest.
func TestCaseEmergencyKeepsRegion(t *testing.T) {
	p := one([]float64{100, 100, 100}, []float64{10, 40, 20, 15}, []int{0, 1, 2, 2})
	p.Servers[1].Region, p.Servers[2].Region = 1, 1
	p.Servers[2].Dead = true
	p.Shards[2].Region = 1
	res := solveOK(t, p, Options{Mode: Emergency})
	wantMoves(t, res, Move{Shard: 2, From: 2, To: 1}, Move{Shard: 3, From: 2, To: 0})
}
