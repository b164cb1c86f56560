package admin

import "github.com/strata-cache/strata/tiers"

// TierStats is a tier reporting itself (embedded.Store, memcached.Pool,
// hotkeys.Tier, and the layering's view of each of its tiers). GET
// /admin/v1/tiers, GET /admin/v1/hotkeys and /metrics read it, as the
// stats command's lines come from the same counters, so no view counts
// or names a figure on its own.
type TierStats interface {
	TierStats() tiers.Stats
}

// Tier is one tier of the layering as the admin API and /metrics see it.
type Tier struct {
	Name string // "l1" or "l2"
	Kind string // KindEmbedded, KindMemcached or KindNone
	// Layer is the layering's view of the tier: hits, misses, errors and
	// the promotions or delayed writes.
	Layer TierStats
	// Own is the tier itself; nil for KindNone.
	Own     TierStats
	Managed bool
}

// Status is t in GET /admin/v1/tiers: the layering's counters of the tier
// merged with the tier's own, and a pool's servers.
func (t Tier) Status() TierStatus {
	st := TierStatus{Name: t.Name, Kind: t.Kind, Counters: map[string]uint64{}, Managed: t.Managed}
	if t.Own == nil {
		return st
	}
	for k, v := range t.Layer.TierStats().Counters {
		st.Counters[k] = v
	}
	own := t.Own.TierStats()
	for k, v := range own.Counters {
		st.Counters[k] = v
	}
	for _, s := range own.Servers {
		st.Servers = append(st.Servers, ServerStatus{Addr: s.Addr, Weight: s.Weight, State: s.State, Counters: s.Counters})
	}
	return st
}

// AddTiers adds the tiers' figures to s: the requests the layering sent
// each tier that exists, by result; its promotions (counted on L1, whether
// or not there is one); what each tier holds, when it knows; and each
// pool server's failures by kind. l1 and l2 are the layering's two tiers.
func (s *Snapshot) AddTiers(l1, l2 Tier) {
	for _, t := range []Tier{l1, l2} {
		if t.Own == nil {
			continue
		}
		c := t.Layer.TierStats().Counters
		s.TierRequests = append(s.TierRequests,
			TierCount{Tier: t.Name, Result: "hit", Count: c["hits"]},
			TierCount{Tier: t.Name, Result: "miss", Count: c["misses"]},
			TierCount{Tier: t.Name, Result: "error", Count: c["errors"]})
	}
	p := l1.Layer.TierStats().Counters
	s.Promotions = []LabeledCount{
		{Label: "attempted", Count: p["promotions_attempted"]},
		{Label: "done", Count: p["promotions_done"]},
		{Label: "failed", Count: p["promotions_failed"]},
		{Label: "skipped", Count: p["promotions_skipped"]},
	}
	for _, t := range []Tier{l1, l2} {
		if t.Own == nil {
			continue
		}
		own := t.Own.TierStats()
		if own.HasUsage {
			s.TierUsage = append(s.TierUsage, TierUsage{Tier: t.Name, Items: own.Usage.Items, Bytes: own.Usage.Bytes, Evictions: own.Usage.Evictions})
		}
		for _, sv := range own.Servers {
			s.BackendErrors = append(s.BackendErrors,
				BackendErrorCount{Tier: t.Name, Server: sv.Addr, Kind: "timeout", Count: sv.Timeouts},
				BackendErrorCount{Tier: t.Name, Server: sv.Addr, Kind: "down", Count: sv.DownRejects},
				BackendErrorCount{Tier: t.Name, Server: sv.Addr, Kind: "error", Count: sv.OtherErrors})
		}
		if n, ok := own.Counters["stall_held"]; ok {
			s.StallHeld = append(s.StallHeld, LabeledCount{Label: t.Name, Count: n})
		}
	}
}
