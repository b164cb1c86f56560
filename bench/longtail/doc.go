// Package longtail reproduces, on strata's own tiers and in process, the
// experiment of Liang et al., "Storage and Performance Optimization of Long
// Tail Key Access in a Social Network" (CloudDP 2013): for the same total
// memory, give every frontend cluster its own cache (L1 only), or give every
// cluster a thin L1 and put the rest of the memory in one L2 they share, with
// an L2 hit promoted into the reader's L1 with probability 1/N.
//
// Data path: Run builds each layout from empty embedded stores
// (tiers/embedded) — the layered one with tiers/layered — and drives the
// same multi-cluster request stream through it, round-robin over the
// clusters, one operation at a time on the calling goroutine. A read that
// misses is followed by a set of the key, as a read-through client does
// after reading the database; in the layered layout that set goes to L2
// only, so a key enters L1 only by promotion. After the run a census looks
// every touched key up in every store (without bumping it) to measure what
// is cached where: L1 memory, and the duplication factor.
//
// Determinism: the workload is seeded, each cluster's promotion coin is a
// seeded PCG stream, and the stores run on a frozen clock, so a run bounded
// by a request count gives the same numbers every time. No goroutines are
// started; the stores must complete each operation inside Do (they do).
package longtail
