package assign

import (
	"errors"
	"fmt"

	"github.com/strata-cache/strata/placement"
)

// State is what the loop says of a member of a tier.
type State uint8

const (
	// Up may own shards.
	Up State = iota
	// Down was declared dead: it owns nothing.
	Down
	// Draining keeps what it owns until moved and receives nothing; periodic
	// mode empties it.
	Draining
	// Returning answered again after Down; it owns nothing until it has
	// been flushed (it may hold values overwritten elsewhere meanwhile).
	Returning
)

var stateNames = [...]string{"up", "down", "draining", "returning"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// ParseState is the inverse of String.
func ParseState(s string) (State, bool) {
	for i, n := range stateNames {
		if n == s {
			return State(i), true
		}
	}
	return 0, false
}

// Member is one server of the tier.
type Member struct {
	Addr   string
	Weight int // relative capacity, >= 1
	State  State
}

// Input is the tier as the loop sees it at one round.
type Input struct {
	Members []Member
	// Owner[shard] indexes Members; -1 or an index out of range is a shard
	// without an owner.
	Owner []int
	// Requests and Bytes are per-shard rates (per second), indexed like
	// Owner; nil means no load is known (the shard count alone balances).
	Requests, Bytes []float64
	// Carried is, per member, the request rate it serves that Plan cannot
	// move: the reads of the read replicas it holds (the owners' shares
	// are in Requests). Nil: none.
	Carried []float64
}

// Options tune Plan.
type Options struct {
	Mode placement.Mode
	Seed uint64
	// MaxMoves caps the moves of one periodic plan (0: no cap). Emergency
	// plans are never capped: every orphan must get an owner.
	MaxMoves int
	// Imbalance is the allowed excess over the mean (default placement's).
	Imbalance float64
}

// Move is one shard changing owner; From is -1 for an orphan.
type Move struct {
	Shard, From, To int
}

// Output is a plan.
type Output struct {
	Owner []int
	Moves []Move
	// Before and After are the allocator's reports.
	Before, After placement.Report
}

// ErrNoServer: no member is Up, so nothing can own a shard.
var ErrNoServer = errors.New("assign: no server is up")

// The metrics Plan balances, in this order. MetricShards counts shards and
// is used only while no load is known.
const (
	MetricRequests = iota
	MetricBytes
	MetricShards
	metrics
)

// Orphans counts the shards whose owner is not a member that may hold
// shards (Up or Draining): the shards an emergency plan must place.
func Orphans(in *Input) int {
	n := 0
	for _, o := range in.Owner {
		if !holds(in, o) {
			n++
		}
	}
	return n
}

func holds(in *Input, o int) bool {
	return o >= 0 && o < len(in.Members) && (in.Members[o].State == Up || in.Members[o].State == Draining)
}

// Plan decides the next owners of in's shards. It is pure: equal inputs
// and options give an equal output.
//
// Capacities are made relative: each Up member's capacity per metric is
// its weight's share of twice the tier's total load, so the mean
// utilisation is 50 % and the allocator's balance goal (no server above
// the mean by more than Imbalance) is what shapes the result.
func Plan(in *Input, o Options) (*Output, error) {
	var upWeight float64
	for _, m := range in.Members {
		if m.Weight < 1 {
			return nil, fmt.Errorf("assign: member %s has weight %d", m.Addr, m.Weight)
		}
		if m.State == Up {
			upWeight += float64(m.Weight)
		}
	}
	if upWeight == 0 {
		return nil, ErrNoServer
	}
	n := len(in.Owner)
	var total [metrics]float64
	shards := make([]placement.Shard, n)
	loads := make([]float64, n*metrics)
	for sh := 0; sh < n; sh++ {
		l := loads[sh*metrics : (sh+1)*metrics : (sh+1)*metrics]
		if in.Requests != nil {
			l[MetricRequests] = in.Requests[sh]
		}
		if in.Bytes != nil {
			l[MetricBytes] = in.Bytes[sh]
		}
		for m := range l {
			total[m] += l[m]
		}
		shards[sh] = placement.Shard{Load: l, Replicas: 1, Region: -1}
	}
	if total[MetricRequests] == 0 && total[MetricBytes] == 0 {
		// Nothing measured yet: balance the shard count. Once load is
		// known, count is left out: balancing it too would fight the
		// load (a hot shard is worth many cold ones).
		for sh := 0; sh < n; sh++ {
			loads[sh*metrics+MetricShards] = 1
		}
		total[MetricShards] = float64(n)
	}
	var carried float64
	for i, c := range in.Carried {
		if i < len(in.Members) && in.Members[i].State == Up {
			carried += c
		}
	}
	servers := make([]placement.Server, len(in.Members))
	for i, m := range in.Members {
		c := make([]float64, metrics)
		for k := range c {
			// A floor keeps capacities positive when nothing was measured.
			c[k] = 2 * (total[k] + 1) * float64(m.Weight) / upWeight
		}
		if carried > 0 && m.State == Up {
			// What a member carries for its replicas comes off its
			// request capacity, twice: every capacity is twice the
			// member's share of the whole load (owners' and replicas'),
			// so the mean utilisation stays 50 % and a balanced plan
			// gives each member its share of the whole, replicas
			// included: owned = share - carried.
			share := 2 * (total[MetricRequests] + carried + 1) * float64(m.Weight) / upWeight
			c[MetricRequests] = max(share-2*in.carried(i), 1e-9*share)
		}
		servers[i] = placement.Server{
			Capacity: c,
			Draining: m.State == Draining,
			Dead:     m.State == Down || m.State == Returning,
		}
	}
	asg := make([][]int, n)
	for sh, ow := range in.Owner {
		if holds(in, ow) {
			asg[sh] = []int{ow}
		}
	}
	opts := placement.Options{Mode: o.Mode, Seed: o.Seed, Imbalance: o.Imbalance}
	if o.Mode == placement.Periodic {
		opts.MaxMoves = o.MaxMoves
	}
	res, err := placement.Solve(&placement.Problem{Metrics: metrics, Servers: servers, Shards: shards, Assignment: asg}, opts)
	if err != nil {
		return nil, err
	}
	out := &Output{Owner: make([]int, n), Before: res.Before, After: res.After}
	count := make([]int, len(in.Members))
	for sh := range out.Owner {
		if ow := res.Assignment[sh][0]; ow >= 0 {
			count[ow]++
		}
	}
	for sh := range out.Owner {
		out.Owner[sh] = res.Assignment[sh][0]
		if out.Owner[sh] < 0 {
			// Capacity refused it (most of the tier is gone): an owner
			// over capacity still serves, a shard without one fails.
			out.Owner[sh] = fewest(in.Members, count)
			count[out.Owner[sh]]++
		}
		from := in.Owner[sh]
		if from != out.Owner[sh] {
			if from >= len(in.Members) {
				from = -1
			}
			out.Moves = append(out.Moves, Move{Shard: sh, From: from, To: out.Owner[sh]})
		}
	}
	return out, nil
}

// carried is Carried[i], 0 when absent.
func (in *Input) carried(i int) float64 {
	if i < len(in.Carried) {
		return in.Carried[i]
	}
	return 0
}

// fewest is the Up member owning the fewest shards (the first on a tie).
func fewest(ms []Member, count []int) int {
	best := -1
	for i, m := range ms {
		if m.State == Up && (best < 0 || count[i] < count[best]) {
			best = i
		}
	}
	return best
}
