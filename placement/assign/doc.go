// Package assign holds the pure decisions of the shard-assignment loop:
// when a server is dead (Detector), and what map a tier should have next
// (Plan). The loop in control/shards owns the clock, the probes, the store
// and the goroutines; it hands everything here as plain values, so each
// decision is a function of its inputs and tests assert exact outcomes.
//
// Data flow of one leader round:
//
//  1. The loop probes every member and reads the agents' reports; it calls
//     Detector.Observe with the time and both, and learns which servers
//     are dead now and which answer again.
//  2. It builds an Input (members with their State, the current owner of
//     every shard, per-shard load) and calls Plan with a seed and a mode.
//     Emergency mode (some shard's owner is dead or gone) only re-places
//     those shards, spread over the live servers; periodic mode runs the
//     allocator's local search to empty drained servers and balance load.
//  3. Plan returns the new owners and the moves; the loop publishes them.
//
// Replicas is the shard-scaling decision: a shard whose per-replica read
// rate leaves a band gains or loses one read replica per call. The
// published map and the pools carry one owner per shard today, so the
// loop does not call it yet; it is the decision half of shard scaling.
//
// Invariants of a Plan result: every shard has an owner that is Up or
// Draining (never Down or Returning) when at least one member is Up, and a
// shard changes owner only onto an Up member; in emergency mode only the
// shards whose owner was neither Up nor Draining move.
package assign
