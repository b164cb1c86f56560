package layered

import "sync/atomic"

// counters are plain atomics: counting adds no lock to the request path.
type counters struct {
	l1Hits, l1Misses, l1Errors atomic.Uint64
	l2Hits, l2Misses, l2Errors atomic.Uint64
	promotionsAttempted        atomic.Uint64
	promotionsDone             atomic.Uint64
	promotionsFailed           atomic.Uint64 // add refused (key already in L1) or L1 error
	promotionsSkipped          atomic.Uint64 // raced with a write, or expiring
	writesDelayed              atomic.Uint64 // writes that waited for a promotion in flight
}

// Stats is a snapshot of the layering's counters.
type Stats struct {
	L1Hits, L1Misses, L1Errors uint64
	L2Hits, L2Misses, L2Errors uint64
	// PromotionsAttempted counts L1 adds issued; Done those L1 stored;
	// Failed those L1 refused or failed; Skipped the chosen hits that were
	// not copied because a write raced with them or they were expiring.
	PromotionsAttempted, PromotionsDone, PromotionsFailed, PromotionsSkipped uint64
	WritesDelayed                                                            uint64
}

// Stats returns a snapshot of the counters.
func (t *Tier) Stats() Stats {
	c := &t.stats
	return Stats{
		L1Hits: c.l1Hits.Load(), L1Misses: c.l1Misses.Load(), L1Errors: c.l1Errors.Load(),
		L2Hits: c.l2Hits.Load(), L2Misses: c.l2Misses.Load(), L2Errors: c.l2Errors.Load(),
		PromotionsAttempted: c.promotionsAttempted.Load(),
		PromotionsDone:      c.promotionsDone.Load(),
		PromotionsFailed:    c.promotionsFailed.Load(),
		PromotionsSkipped:   c.promotionsSkipped.Load(),
		WritesDelayed:       c.writesDelayed.Load(),
	}
}
