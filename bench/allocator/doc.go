// Package allocator runs Shard Manager's allocator stress test against
// placement.Solve, and the comparison of a static rendezvous spread with
// the load-aware allocator.
//
// Generate builds the problem from a seed: shard loads skewed log-uniformly
// up to 20× (bytes; requests/s correlated with bytes; a shard-count
// metric), capacities sized for a mean utilisation, and a uniformly random
// start, which leaves many more violations than production ever sees.
// RunStress solves it in periodic mode and reports the violations before
// and after, the worst max/mean utilisation, the moves and the lower bound
// on moves. Compare starts instead from shardmap.Rendezvous over equal
// servers, the map strata uses before a control plane manages a tier.
//
// Everything here is in-process and single-threaded; the caller owns the
// clock (RunStress takes one only to time the solve).
package allocator
