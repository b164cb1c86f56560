// Package heavy finds the heavy hitters of a stream of keys: the few keys
// that take a large share of the accesses, with their decayed rates.
//
// A Detector is the space-saving algorithm (a fixed table of m counters;
// an untracked key takes over the smallest counter and inherits its count
// as its possible overestimate) with forward exponential decay: an access
// at time t weighs 2^((t-landmark)/halfLife), so every counter decays at
// the same pace without being touched, and comparing counters stays valid.
// When the weights grow large the table is rescaled and the landmark moved.
//
// Guarantee: a key whose decayed count exceeds the table's total decayed
// weight divided by m is in the table, and its count is overestimated by at
// most the Err reported with it.
//
// Ownership: a Detector has no lock and starts no goroutine. One event
// loop owns each Detector; time is an argument of every call, never read
// from a clock. Memory is fixed at construction: m entries of up to MaxKey
// bytes each, and adding a key never allocates.
package heavy
