package main

import (
	"fmt"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
)

// tierHandle is one built tier (L1 or L2) with what serve needs from it
// besides Do: counters for stats, metrics and the admin API, and the
// operations a reload applies.
type tierHandle struct {
	name string // "l1" or "l2"
	kind string
	tier tiers.Tier

	store *embedded.Store // kind embedded
	pool  *poolTier       // kind memcached
}

// buildTier makes the tier ts describes; nil for kind none.
func buildTier(ts tierSettings, env tierEnv) (*tierHandle, error) {
	h := &tierHandle{name: ts.Name, kind: ts.Kind}
	switch ts.Kind {
	case KindNone:
		return nil, nil
	case KindEmbedded:
		if ts.Embedded.Now == nil {
			ts.Embedded.Now = env.now
		}
		st, err := embedded.New(ts.Embedded)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ts.Name, err)
		}
		h.store, h.tier = st, st
	case KindMemcached:
		p, err := newPoolTier(ts, env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ts.Name, err)
		}
		h.pool, h.tier = p, p.tier()
	default:
		return nil, fmt.Errorf("%s: unknown tier kind %q", ts.Name, ts.Kind)
	}
	return h, nil
}

// status is the tier in GET /admin/v1/tiers, with the layering's counters
// of this tier merged into its own.
func (h *tierHandle) status(layering map[string]uint64) admin.TierStatus {
	st := admin.TierStatus{Name: h.name, Kind: h.kind, Counters: map[string]uint64{}}
	for k, v := range layering {
		st.Counters[k] = v
	}
	switch {
	case h.store != nil:
		s := h.store.Stats()
		st.Counters["curr_items"] = s.CurrItems
		st.Counters["bytes"] = s.Bytes
		st.Counters["limit_maxbytes"] = s.LimitMaxBytes
		st.Counters["evictions"] = s.Evictions
		st.Counters["total_items"] = s.TotalItems
	case h.pool != nil:
		st.Servers = h.pool.servers()
		for k, v := range h.pool.counters() {
			st.Counters[k] = v
		}
	}
	return st
}

// capacity is the tier's memory in use and its size, for the locality
// capacity report: an embedded store's own figures, or a pool's servers'
// bytes and limit_maxbytes as last polled (unknown before Start creates
// the pool's totals, which it does before the location service starts).
func (h *tierHandle) capacity() (used, limit uint64, ok bool) {
	switch {
	case h.store != nil:
		s := h.store.Stats()
		return s.Bytes, s.LimitMaxBytes, s.LimitMaxBytes > 0
	case h.pool != nil && h.pool.totals != nil:
		return h.pool.totals.Memory()
	}
	return 0, 0, false
}

// usage is what the tier holds, for the strata_tier_* gauges.
func (h *tierHandle) usage() (admin.TierUsage, bool) {
	if h.store != nil {
		s := h.store.Stats()
		return admin.TierUsage{Tier: h.name, Items: s.CurrItems, Bytes: s.Bytes, Evictions: s.Evictions}, true
	}
	if h.pool != nil {
		return h.pool.usage(h.name)
	}
	return admin.TierUsage{}, false
}
