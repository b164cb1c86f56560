package allocator

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// Stress is the outcome of one stress run: Shard Manager's experiment,
// a random start with skewed shards, solved in periodic mode.
type Stress struct {
	Shards           int            `json:"shards"`
	Servers          int            `json:"servers"`
	Metrics          []string       `json:"metrics"`
	Seed             uint64         `json:"seed"`
	SolveSeconds     float64        `json:"solve_seconds"`
	SolveCPUSeconds  float64        `json:"solve_cpu_seconds,omitempty"`
	ViolationsBefore int            `json:"violations_before"`
	ViolationsAfter  int            `json:"violations_after"`
	BeforeByGoal     map[string]int `json:"violations_before_by_goal"`
	AfterByGoal      map[string]int `json:"violations_after_by_goal"`
	MaxOverMean      float64        `json:"max_over_mean"`
	MaxOverMeanStart float64        `json:"max_over_mean_before"`
	PerMetric        []float64      `json:"max_over_mean_per_metric"`
	Moves            int            `json:"moves"`
	MinMoves         int            `json:"min_moves"`
	MovesOverMin     float64        `json:"moves_over_min"`
	Steps            int64          `json:"steps"`
	Exhausted        bool           `json:"budget_exhausted"`
	// Failover is set when Spec.Fail servers were killed after the solve.
	Failover *Failover `json:"failover,omitempty"`
}

// Failover is the emergency step after the stress solve: Spec.Fail
// servers die and emergency mode places their replicas.
type Failover struct {
	DeadServers   int     `json:"dead_servers"`
	Unplaced      int     `json:"unplaced"`
	Seconds       float64 `json:"emergency_seconds"`
	CPUSeconds    float64 `json:"emergency_cpu_seconds,omitempty"`
	Placed        int     `json:"placed"`
	LeftUnplaced  int     `json:"left_unplaced"`
	Targets       int     `json:"target_servers"`
	MaxPerTarget  int     `json:"max_per_target"`
	SpreadAfter   int     `json:"failover_spread_violations"`
	MaxOverMean   float64 `json:"max_over_mean_after"`
	PeriodicMoves int     `json:"periodic_moves_after"`
}

// Clock times the solves; either field may be nil for no timing. CPU is
// the process's CPU time, which a machine shared with other work leaves
// comparable where the wall clock is not.
type Clock struct {
	Now func() time.Time
	CPU func() time.Duration
}

// span measures one call.
func (c Clock) span(f func() error) (wall, cpu float64, err error) {
	var t0 time.Time
	var c0 time.Duration
	if c.Now != nil {
		t0 = c.Now()
	}
	if c.CPU != nil {
		c0 = c.CPU()
	}
	err = f()
	if c.Now != nil {
		wall = c.Now().Sub(t0).Seconds()
	}
	if c.CPU != nil {
		cpu = (c.CPU() - c0).Seconds()
	}
	return wall, cpu, err
}

// RunStress generates spec's problem and solves it with opts (Mode and
// Seed are overridden: periodic, spec.Seed). clock times the solve only.
func RunStress(spec Spec, opts placement.Options, clock Clock) (*Stress, error) {
	if spec.Shards < 1 || spec.Servers < 1 {
		return nil, errors.New("allocator: shards and servers must be positive")
	}
	if spec.Replicas > spec.Servers {
		return nil, fmt.Errorf("allocator: %d replicas on %d servers", spec.Replicas, spec.Servers)
	}
	p := Generate(spec)
	opts.Mode, opts.Seed = placement.Periodic, spec.Seed
	var res *placement.Result
	wall, cpu, err := clock.span(func() (err error) {
		res, err = placement.Solve(p, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &Stress{
		SolveSeconds: wall, SolveCPUSeconds: cpu,
		Shards: spec.Shards, Servers: spec.Servers, Metrics: Metrics, Seed: spec.Seed,
		ViolationsBefore: res.Before.Total(), ViolationsAfter: res.After.Total(),
		BeforeByGoal: res.Before.ByName(), AfterByGoal: res.After.ByName(),
		MaxOverMean: res.After.WorstMaxOverMean(), MaxOverMeanStart: res.Before.WorstMaxOverMean(),
		PerMetric: res.After.MaxOverMean, Moves: len(res.Moves), MinMoves: res.MinMoves,
		Steps: res.Steps, Exhausted: res.Exhausted,
	}
	if res.MinMoves > 0 {
		out.MovesOverMin = float64(len(res.Moves)) / float64(res.MinMoves)
	}
	if spec.Fail > 0 {
		f, err := failover(p, res.Assignment, spec, opts, clock)
		if err != nil {
			return nil, err
		}
		out.Failover = f
	}
	return out, nil
}

// failover kills spec.Fail servers (drawn with the seed) under the solved
// assignment, runs emergency mode, then one periodic pass, as the
// shard-assignment loop does after a failure.
func failover(p *placement.Problem, assigned [][]int, spec Spec, opts placement.Options, clock Clock) (*Failover, error) {
	if spec.Fail >= spec.Servers {
		return nil, fmt.Errorf("allocator: cannot fail %d of %d servers", spec.Fail, spec.Servers)
	}
	q := *p
	q.Servers = append([]placement.Server(nil), p.Servers...)
	q.Assignment = assigned
	rng := rand.New(rand.NewPCG(spec.Seed, 0xdead))
	for _, i := range rng.Perm(spec.Servers)[:spec.Fail] {
		q.Servers[i].Dead = true
	}
	opts.Mode = placement.Emergency
	var res *placement.Result
	wall, cpu, err := clock.span(func() (err error) {
		res, err = placement.Solve(&q, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	f := &Failover{DeadServers: spec.Fail, Unplaced: res.Before.Violations[placement.GoalUnplaced],
		Placed: len(res.Moves), LeftUnplaced: res.After.Violations[placement.GoalUnplaced],
		SpreadAfter: res.After.Violations[placement.GoalFailoverSpread],
		Seconds:     wall, CPUSeconds: cpu}
	per := map[int]int{}
	for _, mv := range res.Moves {
		per[mv.To]++
	}
	f.Targets = len(per)
	for _, n := range per {
		f.MaxPerTarget = max(f.MaxPerTarget, n)
	}
	q.Assignment = res.Assignment
	opts.Mode = placement.Periodic
	after, err := placement.Solve(&q, opts)
	if err != nil {
		return nil, err
	}
	f.MaxOverMean = after.After.WorstMaxOverMean()
	f.PeriodicMoves = len(after.Moves)
	return f, nil
}

// Side is one way of placing shards in the comparison.
type Side struct {
	Name        string    `json:"name"`
	PerMetric   []float64 `json:"max_over_mean_per_metric"`
	MaxOverMean float64   `json:"max_over_mean"`
	Moves       int       `json:"moves"`
}

// Comparison sets the static rendezvous spread against the load-aware
// allocator on the same skewed shard loads.
type Comparison struct {
	Shards  int      `json:"shards"`
	Servers int      `json:"servers"`
	Seed    uint64   `json:"seed"`
	Metrics []string `json:"metrics"`
	Static  Side     `json:"static_rendezvous"`
	// Aware has one entry per imbalance tolerance asked for.
	Aware []Side `json:"load_aware"`
}

// Compare places spec's shards (spec.Servers equal servers) with
// shardmap.Rendezvous, then lets the allocator improve that map in
// periodic mode, as strata's shard-assignment loop would, once per
// imbalance tolerance (opts.Imbalance when none is given).
func Compare(spec Spec, opts placement.Options, imbalances ...float64) (*Comparison, error) {
	spec.CapacitySpread = 0
	if spec.Replicas > 1 {
		return nil, errors.New("allocator: the rendezvous comparison is for one replica per shard")
	}
	if spec.Shards < 1 || spec.Servers < 1 || spec.Shards > shardmap.MaxShards || spec.Servers > shardmap.MaxServers {
		return nil, fmt.Errorf("allocator: %d shards on %d servers is out of the shard map's range", spec.Shards, spec.Servers)
	}
	p := Generate(spec)
	list := make([]shardmap.Server, spec.Servers)
	for i := range list {
		list[i] = shardmap.Server{Addr: fmt.Sprintf("10.0.%d.%d:11211", i/256, i%256), Weight: 1}
	}
	m, err := shardmap.Rendezvous(spec.Seed, spec.Shards, list)
	if err != nil {
		return nil, err
	}
	for sh := range p.Assignment {
		p.Assignment[sh][0] = m.Owner(sh)
	}
	if len(imbalances) == 0 {
		imbalances = []float64{opts.Imbalance}
	}
	c := &Comparison{Shards: spec.Shards, Servers: spec.Servers, Seed: spec.Seed, Metrics: Metrics}
	opts.Mode, opts.Seed = placement.Periodic, spec.Seed
	for i, imb := range imbalances {
		if imb == 0 {
			imb = placement.DefaultImbalance
		}
		opts.Imbalance = imb
		res, err := placement.Solve(p, opts)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			c.Static = Side{Name: "static rendezvous", PerMetric: res.Before.MaxOverMean, MaxOverMean: res.Before.WorstMaxOverMean()}
		}
		c.Aware = append(c.Aware, Side{
			Name:      fmt.Sprintf("load-aware, mean +%g%%", 100*imb),
			PerMetric: res.After.MaxOverMean, MaxOverMean: res.After.WorstMaxOverMean(), Moves: len(res.Moves),
		})
	}
	return c, nil
}
