package placement

import "fmt"

// Goal is one entry of the objective, in priority order: a lower Goal
// matters more. Unplaced and Capacity are the hard part (a replica must
// have a server; a server never exceeds its capacity); the rest are the
// soft goals of Shard Manager's allocator.
type Goal int

const (
	// GoalUnplaced counts replicas without a live server.
	GoalUnplaced Goal = iota
	// GoalCapacity counts (server, metric) pairs above capacity. Solve never
	// creates one; it only repairs what the input brings.
	GoalCapacity
	// GoalRegion counts replicas outside their shard's preferred region,
	// when that region has a server that can take them.
	GoalRegion
	// GoalZone counts, per shard, replicas sharing a zone beyond what the
	// number of zones forces.
	GoalZone
	// GoalDrain counts replicas on draining servers.
	GoalDrain
	// GoalUtilization counts (server, metric) pairs above Options.Utilization.
	GoalUtilization
	// GoalBalance counts (server, metric) pairs above (1 + Imbalance) × the
	// mean utilisation of all servers.
	GoalBalance
	// GoalRegionalBalance is GoalBalance against the mean of the server's
	// own region. With servers in one region only, it is GoalBalance
	// itself and counts nothing, so no violation is counted twice.
	GoalRegionalBalance
	// GoalFailoverSpread counts the replicas of a dead server that share a
	// new server beyond their fair share ceil(n / live servers), so recovery
	// reads from many servers in parallel.
	GoalFailoverSpread
	// NumGoals is the length of the objective vector.
	NumGoals
)

var goalNames = [NumGoals]string{
	"unplaced", "capacity", "region", "zone", "drain",
	"utilization", "balance", "regional_balance", "failover_spread",
}

func (g Goal) String() string {
	if g >= 0 && g < NumGoals {
		return goalNames[g]
	}
	return fmt.Sprintf("Goal(%d)", int(g))
}

// Report evaluates one assignment.
type Report struct {
	// Violations[g] is the count of goal g. Excess[g] is its magnitude:
	// for load goals the sum of load/capacity above the threshold, for the
	// others equal to the count. The search drives excess down, so a move
	// that relieves a hot server without curing it still counts.
	Violations [NumGoals]int
	Excess     [NumGoals]float64
	// Per metric, over live servers that are not draining: the highest
	// utilisation, the mean (load over capacity) and their ratio.
	MaxUtil, MeanUtil, MaxOverMean []float64
}

// Total is the number of violations over all goals.
func (r *Report) Total() int {
	n := 0
	for _, v := range r.Violations {
		n += v
	}
	return n
}

// WorstMaxOverMean is the highest MaxOverMean over the metrics.
func (r *Report) WorstMaxOverMean() float64 {
	w := 0.0
	for _, v := range r.MaxOverMean {
		w = max(w, v)
	}
	return w
}

// ByName returns the violations keyed by goal name, for JSON.
func (r *Report) ByName() map[string]int {
	m := make(map[string]int, NumGoals)
	for g, v := range r.Violations {
		m[Goal(g).String()] = v
	}
	return m
}

// eps absorbs the rounding of incrementally maintained load sums: a load
// goal is violated only by more than eps (in utilisation units), and a
// change smaller than eps is no change.
const eps = 1e-9

// excessOver returns whether u violates threshold thr and by how much.
func excessOver(u, thr float64) (int32, float64) {
	if u > thr+eps {
		return 1, u - thr
	}
	return 0, 0
}

// term is one goal's part of a change: count and excess.
type term struct {
	c int32
	e float64
}

// delta is the change of the objective that one move or swap makes.
// head breaks ties between equal deltas: the destination's highest
// utilisation after the move relative to the balance threshold (lower is
// roomier).
//
// hit has bit g set when the destination alone gets worse on load goal g
// (it becomes, or was and stays, a violator): periodic phases refuse such
// moves for goals up to their own, so balance is never bought by shifting
// a violation from one server to another, which would cost moves twice.
type delta struct {
	g    [NumGoals]term
	head float64
	hit  uint32
}

func (d *delta) add(o *delta) {
	for i := range d.g {
		d.g[i].c += o.g[i].c
		d.g[i].e += o.g[i].e
	}
	d.head = max(d.head, o.head)
	d.hit |= o.hit
}

// hitsUpTo reports whether the destination got worse on a load goal of
// priority g or higher.
func (d *delta) hitsUpTo(g Goal) bool {
	return d.hit&(1<<(uint(g)+1)-1) != 0
}

// improves reports whether d strictly improves goal g while leaving every
// higher goal's count and excess no worse, and g's count no higher. This
// per-goal rule is stronger than a lexicographic decrease: it is what
// "never worsen a higher-priority goal" means for each step.
func (d *delta) improves(g Goal) bool {
	for h := Goal(0); h < g; h++ {
		if d.g[h].c > 0 || d.g[h].e > eps {
			return false
		}
	}
	t := d.g[g]
	return t.c < 0 || (t.c == 0 && t.e < -eps)
}

// less orders deltas lexicographically (count, then excess, goal by goal),
// then by head.
func (d *delta) less(o *delta) bool {
	for g := range d.g {
		a, b := d.g[g], o.g[g]
		if a.c != b.c {
			return a.c < b.c
		}
		if a.e < b.e-eps {
			return true
		}
		if a.e > b.e+eps {
			return false
		}
	}
	return d.head < o.head
}
