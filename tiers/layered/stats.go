package layered

import (
	"strconv"
	"sync/atomic"
	"time"
)

// counters are plain atomics: counting adds no lock to the request path.
type counters struct {
	l1Hits, l1Misses, l1Errors atomic.Uint64
	l2Hits, l2Misses, l2Errors atomic.Uint64
	promotionsAttempted        atomic.Uint64
	promotionsDone             atomic.Uint64
	promotionsFailed           atomic.Uint64 // add refused (key already in L1) or L1 error
	promotionsSkipped          atomic.Uint64 // raced with a write, or expiring
	writesDelayed              atomic.Uint64 // writes that waited for a promotion in flight
	readsInvalidating          atomic.Uint64 // L2 hits that removed L1's copy: a write was under way
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
	// ReadsInvalidating counts L2 hits that removed L1's copy of their key
	// before answering, because a write of the key's slot was under way.
	ReadsInvalidating uint64
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
		ReadsInvalidating:   c.readsInvalidating.Load(),
	}
}

// AppendStats appends the layering's lines of strata's stats reply:
// "STAT strata_<name> <value>\r\n" for the promotion settings and the
// counters (the L1 ones only when there is an L1).
func (t *Tier) AppendStats(dst []byte) []byte {
	st := t.Stats()
	p := t.Policy()
	line := func(name string, v uint64) {
		dst = append(dst, "STAT strata_"...)
		dst = append(dst, name...)
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, v, 10)
		dst = append(dst, "\r\n"...)
	}
	line("promotion_threshold", uint64(p.Threshold()))
	line("promotion_rules", uint64(len(p.Rules())))
	line("l1_max_ttl", uint64(t.L1MaxTTL()/time.Second))
	if t.l1 != nil {
		line("l1_misses", st.L1Misses)
		line("l1_errors", st.L1Errors)
	}
	line("l2_misses", st.L2Misses)
	line("l2_errors", st.L2Errors)
	line("promotions_attempted", st.PromotionsAttempted)
	line("promotions_done", st.PromotionsDone)
	line("promotions_failed", st.PromotionsFailed)
	line("promotions_skipped", st.PromotionsSkipped)
	line("writes_delayed", st.WritesDelayed)
	line("reads_invalidating", st.ReadsInvalidating)
	return dst
}
