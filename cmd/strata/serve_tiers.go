package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-cache/strata/config"

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
	// loaded: restoreSnapshot ran, so the store holds what the file held
	// and saving it loses nothing. A store that never loaded must not
	// write over the file (a start that fails before serving).
	loaded bool
	pool   *poolTier // kind memcached
}

// buildTier makes the tier ts describes; nil for kind none.
func buildTier(ts config.TierSettings, env tierEnv) (*tierHandle, error) {
	h := &tierHandle{name: ts.Name, kind: ts.Kind}
	switch ts.Kind {
	case config.KindNone:
		return nil, nil
	case config.KindEmbedded:
		if ts.Embedded.Now == nil {
			ts.Embedded.Now = env.now
		}
		st, err := embedded.New(ts.Embedded)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ts.Name, err)
		}
		h.store, h.tier = st, st
	case config.KindMemcached:
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

// adminTier is the tier as the admin API and /metrics read it: the
// layering's view of it and the tier reporting itself.
func (h *tierHandle) adminTier(layer admin.TierStats) admin.Tier {
	t := admin.Tier{Name: h.name, Kind: h.kind, Layer: layer}
	switch {
	case h.store != nil:
		t.Own = h.store
	case h.pool != nil:
		t.Own = h.pool.p
	}
	return t
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

// restoreSnapshot loads an embedded tier's snapshot, if it has one, before
// the listener accepts; a file it cannot use is logged and the tier
// starts empty.
func (h *tierHandle) restoreSnapshot(log *slog.Logger) {
	if h == nil || h.store == nil {
		return
	}
	h.loaded = true
	start := time.Now()
	r, err := h.store.Restore()
	if err != nil {
		log.Error("snapshot not loaded: the tier starts empty", "tier", h.name, "err", err)
	} else if !r.Missing && r.Bytes > 0 {
		log.Info("snapshot loaded", "tier", h.name, "items", r.Items, "expired", r.Expired, "skipped", r.Skipped, "bytes", r.Bytes, "took", time.Since(start).Round(time.Millisecond))
	}
}

// saveSnapshot writes an embedded tier's snapshot, if it has one and was
// loaded: after the drain, or when a start fails after the load.
func (h *tierHandle) saveSnapshot(log *slog.Logger) {
	if h.store == nil || !h.loaded {
		return
	}
	start := time.Now()
	if s, err := h.store.Save(); err != nil {
		log.Error("snapshot not written: the tier will start empty", "tier", h.name, "err", err)
	} else if s.Bytes > 0 {
		log.Info("snapshot written", "tier", h.name, "items", s.Items, "bytes", s.Bytes, "took", time.Since(start).Round(time.Millisecond))
	}
}
