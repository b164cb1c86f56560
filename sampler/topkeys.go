package sampler

import (
	"sort"
	"time"

	"github.com/strata-cache/strata/sampler/samplelog"
)

// KeyRate is one sampled key's recent traffic. Key-hash sampling records
// every access to a sampled key, so the rate is the key's own, not an
// estimate scaled by the sample rate.
type KeyRate struct {
	Key      string  `json:"key"`
	Family   string  `json:"family"`
	Accesses uint64  `json:"accesses"`
	Reads    uint64  `json:"reads"`
	PerSec   float64 `json:"per_sec"`
	L1Hits   uint64  `json:"l1_hits"`
}

// TopKeys returns the n sampled keys accessed most in the last span (ending
// now by the sampler's clock), busiest first, ties by key. It reads the live
// buffer newest first and stops at the first record older than span, so
// its cost follows the traffic of span, not the buffer's size. Records still
// in the ring are not counted. Safe from any goroutine.
func (s *Sampler) TopKeys(n int, span time.Duration) []KeyRate {
	if n <= 0 || span <= 0 {
		return nil
	}
	since := s.cfg.Now().Add(-span).UnixNano()
	byKey := map[string]*KeyRate{}
	s.liveMu.Lock()
	for i := s.live.n - 1; i >= 0; i-- {
		e := &s.live.buf[(s.live.head+i)%len(s.live.buf)]
		if e.Time <= since {
			break
		}
		k := byKey[e.Key]
		if k == nil {
			k = &KeyRate{Key: e.Key, Family: e.Family}
			byKey[e.Key] = k
		}
		k.Accesses++
		if e.Op == samplelog.OpGet {
			k.Reads++
		}
		if e.Level == 1 {
			k.L1Hits++
		}
	}
	s.liveMu.Unlock()
	return topOf(byKey, n, span)
}

// topOf ranks the counted keys; a pure function of its inputs.
func topOf(byKey map[string]*KeyRate, n int, span time.Duration) []KeyRate {
	out := make([]KeyRate, 0, len(byKey))
	for _, k := range byKey {
		k.PerSec = float64(k.Accesses) / span.Seconds()
		out = append(out, *k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Accesses != out[j].Accesses {
			return out[i].Accesses > out[j].Accesses
		}
		return out[i].Key < out[j].Key
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
