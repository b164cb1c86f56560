package placement_test

import (
	"fmt"

	"github.com/strata-cache/strata/placement"
)

// Server 3 dies holding four shards. Emergency mode places them at once,
// largest first, on the roomiest servers, none taking more than two of
// them; it leaves server 1 at 1.12 × the mean. No single move fixes that
// (server 1's smallest shard would push its target over), so the periodic
// pass swaps a 9 for a 6.
func ExampleSolve() {
	p := &placement.Problem{Metrics: 1} // say, bytes
	for zone := 0; zone < 4; zone++ {
		p.Servers = append(p.Servers, placement.Server{Capacity: []float64{100}, Zone: zone})
	}
	p.Servers[3].Dead = true
	for i, bytes := range []float64{12, 10, 10, 9, 10, 10, 10, 10, 11, 16, 4, 6, 3} {
		p.Shards = append(p.Shards, placement.Shard{Load: []float64{bytes}, Replicas: 1, Region: -1})
		p.Assignment = append(p.Assignment, []int{min(i/3, 3)})
	}

	res, err := placement.Solve(p, placement.Options{Mode: placement.Emergency, Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println("emergency moves (shard, replica, from, to):", res.Moves)
	fmt.Printf("unplaced %d -> %d, max/mean %.2f\n", res.Before.Violations[placement.GoalUnplaced],
		res.After.Violations[placement.GoalUnplaced], res.After.WorstMaxOverMean())

	p.Assignment = res.Assignment
	res, err = placement.Solve(p, placement.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("periodic moves: %v, max/mean %.2f, lower bound %d\n", res.Moves, res.After.WorstMaxOverMean(), res.MinMoves)
	// Output:
	// emergency moves (shard, replica, from, to): [{9 0 3 1} {10 0 3 0} {11 0 3 2} {12 0 3 0}]
	// unplaced 4 -> 0, max/mean 1.12
	// periodic moves: [{3 0 1 2} {11 0 2 1}], max/mean 1.04, lower bound 1
}
