package layered

import "github.com/strata-cache/strata/tiers"

// Layer is the layering's view of one of its two tiers: what it sent
// there and what came of it. The tier's own figures (items, servers) are
// the tier's to report; a view of a tier merges the two.
type Layer struct {
	t  *Tier
	l1 bool
}

// L1Layer and L2Layer are the layering's views of its L1 and L2. The L1
// view exists without an L1: its counters are then zero.
func (t *Tier) L1Layer() Layer { return Layer{t: t, l1: true} }

// L2Layer: see L1Layer.
func (t *Tier) L2Layer() Layer { return Layer{t: t} }

// TierStats is the layer's counters: hits, misses and errors, and for L1
// the promotions, for L2 the writes delayed behind a promotion and the
// reads that removed L1's copy while a write was under way.
func (l Layer) TierStats() tiers.Stats {
	st := l.t.Stats()
	if l.l1 {
		return tiers.Stats{Counters: map[string]uint64{
			"hits": st.L1Hits, "misses": st.L1Misses, "errors": st.L1Errors,
			"promotions_attempted": st.PromotionsAttempted, "promotions_done": st.PromotionsDone,
			"promotions_failed": st.PromotionsFailed, "promotions_skipped": st.PromotionsSkipped,
		}}
	}
	return tiers.Stats{Counters: map[string]uint64{
		"hits": st.L2Hits, "misses": st.L2Misses, "errors": st.L2Errors, "writes_delayed": st.WritesDelayed,
		"reads_invalidating": st.ReadsInvalidating,
	}}
}
