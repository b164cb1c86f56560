// Package model is the binomial promotion model of the long-tail cache
// design: an L2 hit is copied into L1 with probability 1/N, independently on
// every access, so a key read k times has been promoted with probability
//
//	P(N, k) = 1 − (1 − 1/N)^k
//
// (the formula itself is tiers/promote.Probability, beside the decision it
// models).
//
// Hot keys (large k) are promoted almost surely and cold keys (small k)
// almost never, which is what keeps L1 thin. The functions here are pure and
// allocation-free except Table; the report uses them to predict, for each
// candidate N, how many bytes a key family would occupy in L1 and what share
// of its reads L1 would serve, from the access counts the sampler observed.
//
// The model assumes every read of a key that is not yet in L1 is an L2 hit
// (a trial), and that a promoted key stays in L1 for the rest of the window
// (no eviction, no expiry, no invalidating write). Both make the predicted
// footprint and traffic share upper bounds.
package model
