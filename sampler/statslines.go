package sampler

import (
	"strconv"
	"strings"
	"sync"
	"time"
)

// The sampler's lines of memcached-style stats replies ("STAT name
// value\r\n"), spelt here beside the values they show.

func appendStat(dst []byte, name, v string) []byte {
	dst = append(dst, "STAT "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = append(dst, v...)
	return append(dst, "\r\n"...)
}

func appendStatUint(dst []byte, name string, v uint64) []byte {
	return appendStat(dst, name, strconv.FormatUint(v, 10))
}

// AppendStats appends the sampler's lines of a plain stats reply.
func (s *Sampler) AppendStats(dst []byte) []byte {
	st := s.Stats()
	dst = appendStatUint(dst, "strata_sample_rate", st.Rate)
	dst = appendStatUint(dst, "strata_sampler_records", st.Recorded)
	return appendStatUint(dst, "strata_sampler_dropped", st.Dropped)
}

// AppendSectionStats appends "stats sampler": the counters, then the live
// per-family aggregates of r (see LiveCache).
func (s *Sampler) AppendSectionStats(dst []byte, r *Report) []byte {
	st := s.Stats()
	dst = appendStatUint(dst, "rate", st.Rate)
	dst = appendStatUint(dst, "records", st.Recorded)
	dst = appendStatUint(dst, "dropped", st.Dropped)
	dst = appendStatUint(dst, "drained", st.Drained)
	dst = appendStatUint(dst, "written", st.Written)
	dst = appendStatUint(dst, "log_errors", st.LogErrors)
	dst = appendStatUint(dst, "log_files", st.LogFiles)
	dst = appendStatUint(dst, "keys_truncated", st.KeysTruncated)
	dst = appendStatUint(dst, "live_records", uint64(st.LiveRecords))
	dst = appendStatUint(dst, "ring_len", uint64(st.RingLen))
	dst = appendStatUint(dst, "ring_cap", uint64(st.RingCap))
	if r == nil {
		return dst
	}
	dst = appendStat(dst, "window", r.Window)
	for _, f := range r.Families {
		name := "family:" + statName(f.Family) + ":"
		dst = appendStatUint(dst, name+"accesses", f.Accesses)
		dst = appendStatUint(dst, name+"unique_keys", f.UniqueKeys)
		dst = appendStatUint(dst, name+"region_wss_bytes", f.RegionWSSBytes)
		dst = appendStat(dst, name+"duplication_factor", strconv.FormatFloat(f.DuplicationFactor, 'f', 3, 64))
		dst = appendStat(dst, name+"hit_ratio_l1", strconv.FormatFloat(f.HitRatio.L1, 'f', 4, 64))
		dst = appendStat(dst, name+"hit_ratio_l2", strconv.FormatFloat(f.HitRatio.L2, 'f', 4, 64))
		dst = appendStat(dst, name+"hit_ratio_combined", strconv.FormatFloat(f.HitRatio.Combined, 'f', 4, 64))
		dst = appendStatUint(dst, name+"recommended_threshold", uint64(max(f.RecommendedThreshold, 0)))
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

// LiveCache keeps a sampler's live report for a second: "stats sampler"
// runs on an event loop, and building the report walks every live record.
// The zero value is ready; it is safe for concurrent use.
type LiveCache struct {
	mu sync.Mutex // guards at and r
	at time.Time
	r  *Report
}

const liveCacheTTL = time.Second

// Report returns s.Live(), built at most once a second.
func (c *LiveCache) Report(s *Sampler, now time.Time) *Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.r == nil || now.Sub(c.at) >= liveCacheTTL || now.Before(c.at) {
		c.r, c.at = s.Live(), now
	}
	return c.r
}

// Invalidate drops the cached report.
func (c *LiveCache) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.r = nil
}
