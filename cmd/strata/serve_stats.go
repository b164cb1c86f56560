package main

import (
	"strconv"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/memcached"
)

// appendStats is the proxy's WithStats hook: it runs on an event loop when
// a client sends stats, after the proxy wrote its own lines, and composes
// the lines of the packages that own the values (each spells its own).
//
//	stats              the tier of record's item and memory fields under
//	                   memcached's names (an embedded L2's own; an L2
//	                   pool's summed over its servers, polled every 10s),
//	                   then strata_* lines of the layering, each tier, the
//	                   region links and the sampler
//	stats settings     maxbytes of an embedded L2
//	stats items|slabs  an embedded L2's slab class view; over a pool,
//	                   its servers' summed per class (polled as above)
//	stats cachedump    an embedded L2's items of one class
//	stats reset        the embedded tiers' counters
//	stats tiers        each tier's strata_* lines
//	stats sampler      the sampler's counters and live per-family aggregates
//	stats hotkeys      the hot-key tier's counters and its hot keys
func (a *app) appendStats(dst []byte, args [][]byte) []byte {
	store, rec := a.l2.store, a.record() // store is nil over a pool
	section := ""
	if len(args) > 0 {
		section = string(args[0])
	}
	switch section {
	case "":
		if rec != nil {
			dst = rec.AppendStats(dst)
		}
		dst = a.layered.AppendStats(dst)
		dst = a.appendTiers(dst)
		if a.locality != nil {
			dst = a.locality.AppendStats(dst)
		}
		return a.sampler.AppendStats(dst)
	case "settings":
		if store != nil {
			dst = store.AppendSettings(dst)
		}
	case "items":
		if rec != nil {
			return rec.AppendItemStats(dst)
		}
	case "slabs":
		if rec != nil {
			return rec.AppendSlabStats(dst)
		}
		dst = protocol.AppendStatUint(dst, "active_slabs", 0)
		dst = protocol.AppendStatUint(dst, "total_malloced", 0)
	case "cachedump":
		// The proxy checked both numbers.
		class, _ := strconv.Atoi(string(args[1]))
		limit, _ := strconv.Atoi(string(args[2]))
		if store != nil {
			dst = store.AppendCacheDump(dst, class, limit)
		}
	case "reset":
		for _, h := range a.tierHandles() {
			if h.store != nil {
				h.store.ResetStats()
			}
		}
	case "tiers":
		return a.appendTiers(dst)
	case "sampler":
		return a.sampler.AppendSectionStats(dst, a.live.Report(a.sampler, time.Now()))
	case "hotkeys":
		return a.hotkeys.AppendStats(dst)
	}
	return dst
}

// recordStats are the tier of record's item and memory figures under
// memcached's names, as its package spells them.
type recordStats interface {
	AppendStats(dst []byte) []byte
	AppendItemStats(dst []byte) []byte
	AppendSlabStats(dst []byte) []byte
}

var (
	_ recordStats = (*embedded.Store)(nil)
	_ recordStats = (*memcached.ServerTotals)(nil)
)

// record is an embedded L2 or an L2 pool's server totals; nil for a pool
// before Start polls its servers.
func (a *app) record() recordStats {
	switch {
	case a.l2.store != nil:
		return a.l2.store
	case a.l2.pool != nil && a.l2.pool.totals != nil:
		return a.l2.pool.totals
	}
	return nil
}

// appendTiers writes each tier's strata_<tier>_* lines.
func (a *app) appendTiers(dst []byte) []byte {
	if a.l1 == nil {
		dst = protocol.AppendStatString(dst, "strata_l1_kind", config.KindNone)
	}
	for _, h := range a.tierHandles() {
		prefix := "strata_" + h.name + "_"
		dst = protocol.AppendStatString(dst, prefix+"kind", h.kind)
		switch {
		case h.store != nil:
			dst = h.store.AppendTierStats(dst, prefix)
		case h.pool != nil:
			dst = h.pool.appendStats(dst, prefix)
		}
	}
	return dst
}
