package hotkeys

import (
	"sort"
	"sync/atomic"
)

// counters are the tier's plain counters; the edge registers them as
// metrics.
type counters struct {
	splitOps       atomic.Uint64
	subOps         atomic.Uint64
	clientErrors   atomic.Uint64
	decrFloor      atomic.Uint64
	copyHits       atomic.Uint64
	copyMisses     atomic.Uint64
	fills          atomic.Uint64
	fillsSkipped   atomic.Uint64
	copyDeletes    atomic.Uint64
	marksPublished atomic.Uint64
	// bounded replies and the near cache
	boundedReplies   atomic.Uint64
	boundedRefreshes atomic.Uint64
	boundedWaits     atomic.Uint64
	boundedCombined  atomic.Uint64
	nearHits         atomic.Uint64
	nearStores       atomic.Uint64
	nearDrops        atomic.Uint64
}

// Stats is a snapshot of the tier's counters.
type Stats struct {
	SplitOps       uint64 // client requests on keys under a rule
	SubOps         uint64 // requests sent to tiers on their behalf
	ClientErrors   uint64 // CAS on split keys, refused
	DecrFloor      uint64 // decrs that stopped at 0 (or took less than asked)
	CopyHits       uint64 // read-rule reads served by an L1 copy
	CopyMisses     uint64
	Fills          uint64 // copies filled from the tier of record
	FillsSkipped   uint64 // fills dropped because a write raced them
	CopyDeletes    uint64 // copies deleted by writes, and by reads that met one (fillRead)
	MarksPublished uint64
	// BoundedReplies: incrs answered from this strata's view of a counter
	// (reply = "bounded"); BoundedRefreshes: rounds that read every part
	// to renew a view (an incr's, or a get's); BoundedWaits: incrs whose
	// reply waited for a refresh because the view was too old;
	// BoundedCombined: incrs that rode in another's operation (combine.go),
	// each one operation the servers did not do.
	BoundedReplies, BoundedRefreshes, BoundedWaits, BoundedCombined uint64
	// NearHits: gets served from the near cache; NearStores: values put
	// in it; NearDrops: values dropped by a write through this strata.
	NearHits, NearStores, NearDrops uint64
	Marked                          int // keys marked hot now
	Rules                           int
}

// Stats returns the counters; it takes no lock the data path takes.
func (t *Tier) Stats() Stats {
	c := &t.stats
	return Stats{
		SplitOps: c.splitOps.Load(), SubOps: c.subOps.Load(), ClientErrors: c.clientErrors.Load(),
		DecrFloor: c.decrFloor.Load(), CopyHits: c.copyHits.Load(), CopyMisses: c.copyMisses.Load(),
		Fills: c.fills.Load(), FillsSkipped: c.fillsSkipped.Load(), CopyDeletes: c.copyDeletes.Load(),
		MarksPublished: c.marksPublished.Load(),
		BoundedReplies: c.boundedReplies.Load(), BoundedRefreshes: c.boundedRefreshes.Load(), BoundedWaits: c.boundedWaits.Load(),
		BoundedCombined: c.boundedCombined.Load(), NearHits: c.nearHits.Load(), NearStores: c.nearStores.Load(), NearDrops: c.nearDrops.Load(),
		Marked: len(t.marked.Load().byKey),
		Rules:  len(t.rules.Load().rules),
	}
}

// HotKey is one key the tier splits or sees hot.
type HotKey struct {
	Key  string
	Kind Kind
	K    int
	// Split: writes (counter, list) or reads (read) go to the parts now.
	Split bool
	// ReadsPerSec and WritesPerSec are this strata's decayed rates as of
	// the loops' last scans (lower bounds).
	ReadsPerSec, WritesPerSec float64
	// Since is when the key was marked (adaptive rules), or for a static
	// rule the time of the oldest loop scan its rates come from;
	// nanoseconds.
	Since int64
}

// HotKeys lists the keys under a rule that are marked, or whose rate
// reaches the configured rate, hottest first. It is meant for the admin
// API and stats, not the data path.
func (t *Tier) HotKeys() []HotKey {
	rs := t.rules.Load()
	marks := t.marked.Load().byKey
	var out []HotKey
	seen := map[string]bool{}
	var oldest int64
	for i := range t.loops {
		if v := t.loops[i].view.Load(); v != nil && (oldest == 0 || v.at < oldest) {
			oldest = v.at
		}
	}
	for _, k := range t.merged() {
		r := rs.match([]byte(k.key))
		if r == nil {
			continue
		}
		m, marked := marks[k.key]
		rate := k.writes
		if r.Kind == KindRead {
			rate = k.reads
		}
		if !marked && rate < t.cfg.Rate {
			continue
		}
		h := HotKey{Key: k.key, Kind: r.Kind, K: r.Split, Split: marked || !r.Adaptive, ReadsPerSec: k.reads, WritesPerSec: k.writes, Since: oldest}
		if marked {
			h.Since = m.Since
		}
		seen[k.key] = true
		out = append(out, h)
	}
	for key, m := range marks {
		if !seen[key] {
			out = append(out, HotKey{Key: key, Kind: m.Kind, K: m.K, Split: true, Since: m.Since})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		ra, rb := out[a].ReadsPerSec+out[a].WritesPerSec, out[b].ReadsPerSec+out[b].WritesPerSec
		if ra != rb {
			return ra > rb
		}
		return out[a].Key < out[b].Key
	})
	return out
}
