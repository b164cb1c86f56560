// Package placement holds strata's pure placement decisions: the shard
// allocator (Solve) and the μ-shard migration choice (Decide, see
// "Locality" below). The allocator: given servers, shards with their load, the current
// assignment of shard replicas to servers, a seed and a step budget, Solve
// returns a new assignment, the moves that lead to it and a report of
// every goal before and after.
//
// Nothing here starts a goroutine, does I/O, reads the clock (unless the
// caller hands one in through Options.Now) or touches global randomness.
// The shard-assignment loop in control owns those and calls Solve.
//
// # Usage contract
//
//  1. Build a Problem: Servers (index = server id) with per-metric Capacity,
//     Region, Zone, Draining, Dead; Shards (index = shard id) with
//     per-replica Load on the same metrics, Replicas and a preferred Region
//     (-1: none); the current Assignment, which may be partial or invalid.
//     Metrics are whatever the caller measures; strata uses bytes,
//     requests/s and shard count.
//  2. Call Solve with Options. Emergency mode when replicas are unplaced
//     (a server died, a shard is new): it only places them, under the hard
//     constraints, within the move caps, and touches nothing else.
//     Periodic mode on a timer: it fixes goal by goal and never makes a
//     higher-priority goal worse.
//  3. Publish Result.Assignment. Execute Result.Moves; the two moves of a
//     swap belong together. Solve keeps no state: the next call starts from
//     whatever assignment the caller passes.
//
// Solve never modifies the Problem; the Result shares no memory with it.
// Equal inputs with an equal Seed give an equal Result when the budget is
// MaxSteps; a Deadline makes the stopping point depend on timing.
//
// # The objective
//
// Hard constraints: a server never goes above its capacity on any metric
// (Solve moves load off a server the input left above it, and never onto
// one); a shard's replicas sit on distinct servers; moves per server and in
// total stay within the caps. Soft goals, in priority order, are the Goal
// constants: unplaced replicas, capacity overflow from the input, region
// preference, zone spread, drained servers emptied, utilisation at most
// Options.Utilization, no server above (1 + Imbalance) × the mean
// utilisation (global, then within its region), a dead server's replicas
// spread over many servers, and, last, few moves.
//
// Each goal has a count and an excess (how far over). The search is Shard
// Manager's local search: one phase per goal, violators worst first, a
// hot server's replicas in the order of what they fix (largest first),
// candidate targets sampled from the server's region and from all
// servers, a scan when samples fail, and a two-way swap when no single
// move helps. A periodic step is taken only if it strictly improves its
// goal and leaves the count and excess of every higher goal no worse, and
// only if its destination does not itself become a violator of the goals
// up to its own, so churn is spent only on fixing violations: an
// assignment without violations yields no moves.
//
// The balance threshold uses the mean utilisation every live, non-draining
// server would have with every replica placed, so it stays fixed while
// the search runs. The regional threshold uses the region's current load
// and moves when load crosses regions; only phases above regional balance
// move load across regions.
//
// Result.MinMoves is a lower bound on the moves any solution needs
// (bound.go explains it), so Moves / MinMoves measures the churn spent
// above the minimum.
//
// # Locality
//
// The placement service of locality routing keeps, per μ-shard, a Decayed
// access count per region (merged from the proxies' batches), and asks
// Decide whether the μ-shard should stay with its owner or migrate, each
// time it hears of a remote access. Decide takes the time, the policy, the
// regions (capacity), the μ-shard's state (owner, counters, last migration,
// first remote access, pins), the global rate cap as a Bucket value and a
// seed, and returns the decision, its Reason and the bucket to keep. The
// caller owns the state: it records the migration, resets FirstRemote, and
// threads the returned bucket into the next call. locality.go states the
// order of the rules; pins always win, and an owner is kept on a tie.
package placement
