package main

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/sampler"
)

// appendStats is the proxy's WithStats hook: it runs on an event loop when
// a client sends stats, and appends strata's own lines after memcached's.
//
//	stats          the tiers (items, bytes, evictions; per-server lines of
//	               pools), the layering (misses, errors, promotions) and
//	               the promotion settings
//	stats sampler  the sampler's counters and its live per-family
//	               aggregates
//	stats hotkeys  the hot-key tier's counters and its hot keys
func (a *app) appendStats(dst []byte, args [][]byte) []byte {
	switch {
	case len(args) == 0:
		return a.appendTierStats(dst)
	case len(args) == 1 && string(args[0]) == "sampler":
		return a.appendSamplerStats(dst)
	case len(args) == 1 && string(args[0]) == "hotkeys":
		return a.appendHotKeyStats(dst)
	}
	return dst
}

func (a *app) appendTierStats(dst []byte) []byte {
	// memcached's own item fields, which monitoring tools read unprefixed,
	// describe the tier of record; a pool's items live in its servers.
	if a.l2.store != nil {
		es := a.l2.store.Stats()
		dst = protocol.AppendStatUint(dst, "curr_items", es.CurrItems)
		dst = protocol.AppendStatUint(dst, "total_items", es.TotalItems)
		dst = protocol.AppendStatUint(dst, "bytes", es.Bytes)
		dst = protocol.AppendStatUint(dst, "limit_maxbytes", es.LimitMaxBytes)
		dst = protocol.AppendStatUint(dst, "evictions", es.Evictions)
	}
	ls := a.layered.Stats()
	p := a.layered.Policy()
	dst = protocol.AppendStatUint(dst, "strata_promotion_threshold", uint64(p.Threshold()))
	dst = protocol.AppendStatUint(dst, "strata_promotion_rules", uint64(len(p.Rules())))
	dst = protocol.AppendStatUint(dst, "strata_l1_max_ttl", uint64(a.layered.L1MaxTTL()/time.Second))
	if a.l1 != nil {
		dst = protocol.AppendStatUint(dst, "strata_l1_misses", ls.L1Misses)
		dst = protocol.AppendStatUint(dst, "strata_l1_errors", ls.L1Errors)
	}
	dst = protocol.AppendStatUint(dst, "strata_l2_misses", ls.L2Misses)
	dst = protocol.AppendStatUint(dst, "strata_l2_errors", ls.L2Errors)
	dst = protocol.AppendStatUint(dst, "strata_promotions_attempted", ls.PromotionsAttempted)
	dst = protocol.AppendStatUint(dst, "strata_promotions_done", ls.PromotionsDone)
	dst = protocol.AppendStatUint(dst, "strata_promotions_failed", ls.PromotionsFailed)
	dst = protocol.AppendStatUint(dst, "strata_promotions_skipped", ls.PromotionsSkipped)
	dst = protocol.AppendStatUint(dst, "strata_writes_delayed", ls.WritesDelayed)
	if a.l1 == nil {
		dst = protocol.AppendStatString(dst, "strata_l1_kind", KindNone)
	}
	for _, h := range a.tierHandles() {
		dst = h.appendStats(dst)
	}
	st := a.sampler.Stats()
	dst = protocol.AppendStatUint(dst, "strata_sample_rate", st.Rate)
	dst = protocol.AppendStatUint(dst, "strata_sampler_records", st.Recorded)
	dst = protocol.AppendStatUint(dst, "strata_sampler_dropped", st.Dropped)
	return dst
}

func (a *app) appendSamplerStats(dst []byte) []byte {
	st := a.sampler.Stats()
	dst = protocol.AppendStatUint(dst, "rate", st.Rate)
	dst = protocol.AppendStatUint(dst, "records", st.Recorded)
	dst = protocol.AppendStatUint(dst, "dropped", st.Dropped)
	dst = protocol.AppendStatUint(dst, "drained", st.Drained)
	dst = protocol.AppendStatUint(dst, "written", st.Written)
	dst = protocol.AppendStatUint(dst, "log_errors", st.LogErrors)
	dst = protocol.AppendStatUint(dst, "log_files", st.LogFiles)
	dst = protocol.AppendStatUint(dst, "keys_truncated", st.KeysTruncated)
	dst = protocol.AppendStatUint(dst, "live_records", uint64(st.LiveRecords))
	dst = protocol.AppendStatUint(dst, "ring_len", uint64(st.RingLen))
	dst = protocol.AppendStatUint(dst, "ring_cap", uint64(st.RingCap))
	r := a.live.report(a.sampler, time.Now())
	dst = protocol.AppendStatString(dst, "window", r.Window)
	for _, f := range r.Families {
		name := "family:" + statName(f.Family) + ":"
		dst = protocol.AppendStatUint(dst, name+"accesses", f.Accesses)
		dst = protocol.AppendStatUint(dst, name+"unique_keys", f.UniqueKeys)
		dst = protocol.AppendStatUint(dst, name+"region_wss_bytes", f.RegionWSSBytes)
		dst = protocol.AppendStatString(dst, name+"duplication_factor", strconv.FormatFloat(f.DuplicationFactor, 'f', 3, 64))
		dst = protocol.AppendStatString(dst, name+"hit_ratio_l1", strconv.FormatFloat(f.HitRatio.L1, 'f', 4, 64))
		dst = protocol.AppendStatString(dst, name+"hit_ratio_l2", strconv.FormatFloat(f.HitRatio.L2, 'f', 4, 64))
		dst = protocol.AppendStatString(dst, name+"hit_ratio_combined", strconv.FormatFloat(f.HitRatio.Combined, 'f', 4, 64))
		dst = protocol.AppendStatUint(dst, name+"recommended_threshold", uint64(max(f.RecommendedThreshold, 0)))
	}
	return dst
}

// statName makes a family name safe inside a STAT line, which ends at
// white space.
func statName(s string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, s)
}

// liveCache keeps the sampler's live report for a second: `stats sampler`
// runs on an event loop, and building the report walks every live record.
type liveCache struct {
	mu sync.Mutex // guards at and r
	at time.Time
	r  *sampler.Report
}

const liveCacheTTL = time.Second

func (c *liveCache) report(s *sampler.Sampler, now time.Time) *sampler.Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.r == nil || now.Sub(c.at) >= liveCacheTTL || now.Before(c.at) {
		c.r, c.at = s.Live(), now
	}
	return c.r
}

// invalidate drops the cached report.
func (c *liveCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.r = nil
}
