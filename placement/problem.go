package placement

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Server is one server a tier can place shard replicas on. Its index in
// Problem.Servers is its id everywhere in this package.
type Server struct {
	// Capacity per metric, indexed like Shard.Load. Every entry of a live
	// server must be positive and finite.
	Capacity []float64
	// Region and Zone are small non-negative ids chosen by the caller
	// (Region below MaxRegions). Zone ids are global: two servers with the
	// same Zone share a fault domain whatever their Region.
	Region, Zone int
	// Draining servers keep serving what they hold but receive nothing, and
	// periodic mode moves everything off them.
	Draining bool
	// Dead servers hold nothing: their replicas count as unplaced and are
	// placed again (emergency mode exists for exactly that).
	Dead bool
}

// Shard is one shard and the load each of its replicas puts on a server.
type Shard struct {
	// Load per metric of one replica; non-negative and finite.
	Load []float64
	// Replicas is how many distinct servers must hold the shard (>= 1).
	Replicas int
	// Region is the preferred region, or -1 for none.
	Region int
}

// Problem is the input of Solve. Solve never modifies it.
type Problem struct {
	// Metrics is M, the length of every Capacity and Load (e.g. bytes,
	// requests/s, shard count).
	Metrics int
	Servers []Server
	Shards  []Shard
	// Assignment[shard] lists the servers of the shard's replicas. It may
	// be nil, shorter than Shards, or invalid: entries out of range, on a
	// dead server or repeating a server are unplaced replicas; entries
	// beyond Shard.Replicas are dropped.
	Assignment [][]int
}

// Mode selects what Solve may change.
type Mode int

const (
	// Periodic improves the whole assignment goal by goal. Every step
	// strictly improves one goal and worsens no goal of higher priority
	// (neither its count nor its excess), so a higher goal never ends worse.
	Periodic Mode = iota
	// Emergency only places unplaced replicas, under the hard constraints,
	// choosing among sampled servers the least loaded and spreading a dead
	// server's replicas. It moves nothing that is placed.
	Emergency
)

func (m Mode) String() string {
	switch m {
	case Periodic:
		return "periodic"
	case Emergency:
		return "emergency"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Options tune one Solve call. The zero value is usable: periodic mode,
// seed 0, the default thresholds, no move caps, the default step budget.
type Options struct {
	Mode Mode
	// Seed drives candidate sampling; equal inputs and seed give an equal
	// Result when the budget is in steps.
	Seed uint64
	// MaxSteps bounds the candidate evaluations (one move or swap
	// considered is one step). 0 means 200 per replica plus 10 million.
	MaxSteps int64
	// Now and Deadline add an optional time budget, checked every 4096
	// steps; Deadline is ignored while Now is nil. A result cut short by a
	// deadline depends on timing; tests leave Now nil.
	Now      func() time.Time
	Deadline time.Time
	// MaxMovesPerServer caps the replicas moving in or out of one server
	// (0: no cap). MaxMoves caps all moves (0: no cap). The caller counts
	// moves still in flight by lowering these caps.
	MaxMovesPerServer, MaxMoves int
	// Utilization is the soft ceiling of load/capacity (default
	// DefaultUtilization).
	Utilization float64
	// Imbalance is how far above the mean utilisation a server may go, as a
	// fraction of the mean (default DefaultImbalance: at most 1.10 × mean).
	Imbalance float64
	// Samples is the number of candidate servers drawn per decision before
	// falling back to a scan (default DefaultSamples).
	Samples int
}

// Defaults of Options: Shard Manager's thresholds (no server above 90 %
// utilisation, none more than 10 % above the mean) and a sample size that
// finds a target in one draw while a tenth of the servers can take it
// (1 − 0.9^16 ≈ 81 %; a scan follows when it does not).
const (
	DefaultUtilization = 0.9
	DefaultImbalance   = 0.10
	DefaultSamples     = 16
)

// ErrInvalid is wrapped by every error Solve returns.
var ErrInvalid = errors.New("placement: invalid problem")

func (o *Options) validate(p *Problem) error {
	if o.Mode != Periodic && o.Mode != Emergency {
		return fmt.Errorf("%w: unknown mode %d", ErrInvalid, int(o.Mode))
	}
	if o.Utilization == 0 {
		o.Utilization = DefaultUtilization
	}
	if o.Imbalance == 0 {
		o.Imbalance = DefaultImbalance
	}
	if o.Samples == 0 {
		o.Samples = DefaultSamples
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 10_000_000 + 200*int64(len(p.Shards))
	}
	switch {
	case !(o.Utilization > 0 && o.Utilization <= 1):
		return fmt.Errorf("%w: utilization %v not in (0, 1]", ErrInvalid, o.Utilization)
	case !(o.Imbalance > 0 && o.Imbalance < 100):
		return fmt.Errorf("%w: imbalance %v not in (0, 100)", ErrInvalid, o.Imbalance)
	case o.Samples < 1, o.MaxSteps < 1, o.MaxMoves < 0, o.MaxMovesPerServer < 0:
		return fmt.Errorf("%w: samples, steps and move caps must be positive", ErrInvalid)
	}
	return nil
}

// maxIDs bounds ids so that they fit the int32 arrays of the search.
const maxIDs = 1 << 30

// MaxRegions bounds region ids: the search keeps per-region arrays.
const MaxRegions = 1 << 12

func (p *Problem) validate() error {
	if p.Metrics < 1 || p.Metrics > 64 {
		return fmt.Errorf("%w: %d metrics (want 1..64)", ErrInvalid, p.Metrics)
	}
	if len(p.Servers) == 0 || len(p.Servers) > maxIDs || len(p.Shards) > maxIDs {
		return fmt.Errorf("%w: %d servers, %d shards", ErrInvalid, len(p.Servers), len(p.Shards))
	}
	if len(p.Assignment) > len(p.Shards) {
		return fmt.Errorf("%w: assignment lists %d shards of %d", ErrInvalid, len(p.Assignment), len(p.Shards))
	}
	for i, s := range p.Servers {
		if len(s.Capacity) != p.Metrics {
			return fmt.Errorf("%w: server %d has %d capacities for %d metrics", ErrInvalid, i, len(s.Capacity), p.Metrics)
		}
		if s.Region < 0 || s.Zone < 0 || s.Region >= MaxRegions || s.Zone >= maxIDs {
			return fmt.Errorf("%w: server %d has region %d, zone %d", ErrInvalid, i, s.Region, s.Zone)
		}
		if s.Dead {
			continue
		}
		for m, c := range s.Capacity {
			if !(c > 0) || math.IsInf(c, 0) {
				return fmt.Errorf("%w: server %d capacity[%d] = %v", ErrInvalid, i, m, c)
			}
		}
	}
	replicas := 0
	for i, sh := range p.Shards {
		if len(sh.Load) != p.Metrics {
			return fmt.Errorf("%w: shard %d has %d loads for %d metrics", ErrInvalid, i, len(sh.Load), p.Metrics)
		}
		for m, l := range sh.Load {
			if !(l >= 0) || math.IsInf(l, 0) {
				return fmt.Errorf("%w: shard %d load[%d] = %v", ErrInvalid, i, m, l)
			}
		}
		if sh.Replicas < 1 || sh.Replicas > 64 {
			return fmt.Errorf("%w: shard %d wants %d replicas (want 1..64)", ErrInvalid, i, sh.Replicas)
		}
		if sh.Region < -1 || sh.Region >= maxIDs {
			return fmt.Errorf("%w: shard %d prefers region %d", ErrInvalid, i, sh.Region)
		}
		replicas += sh.Replicas
		if replicas > maxIDs {
			return fmt.Errorf("%w: more than %d replicas", ErrInvalid, maxIDs)
		}
	}
	return nil
}

// Move is one replica changing server. From is -1 for a replica that had
// no server (new, or listed invalidly); a From naming a dead server is a
// failover.
type Move struct {
	Shard, Replica int
	From, To       int
}

// Result is what Solve decided.
type Result struct {
	// Assignment[shard][replica] is a server index, or -1 for a replica
	// still unplaced. Replica i stays at index i, so a Move's Replica
	// indexes both the input and the output lists.
	Assignment [][]int
	// Moves lists every replica whose server differs from the input, in
	// shard order. Its length is the churn.
	Moves []Move
	// Before and After evaluate the input and the output with the same
	// thresholds.
	Before, After Report
	// MinMoves is a lower bound on the moves of any assignment that fixes
	// every violation of the capacity, region, drain, utilisation and
	// global balance goals (and the zone spread); see bound.go.
	MinMoves int
	// Steps is the number of candidate evaluations spent.
	Steps int64
	// Exhausted is true when the step budget or the deadline stopped the
	// search before it ran out of improving moves.
	Exhausted bool
}
