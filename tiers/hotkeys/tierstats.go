package hotkeys

import (
	"strconv"

	"github.com/strata-cache/strata/tiers"
)

// counterNames are the tier's counters in the order `stats hotkeys`
// prints them.
var counterNames = []string{"split_ops", "sub_ops", "client_errors", "decr_floor", "copy_hits", "copy_misses", "fills", "fills_skipped", "copy_deletes", "marks_published",
	"bounded_replies", "bounded_refreshes", "bounded_waits", "bounded_combined", "near_hits", "near_stores", "near_drops"}

// TierStats is the tier as it reports itself: its counters by the names
// of the stats command and the admin API.
func (t *Tier) TierStats() tiers.Stats {
	return tiers.Stats{Counters: t.Stats().counters()}
}

// counters are st's counters by name.
func (st Stats) counters() map[string]uint64 {
	return map[string]uint64{
		"split_ops":         st.SplitOps,
		"sub_ops":           st.SubOps,
		"client_errors":     st.ClientErrors,
		"decr_floor":        st.DecrFloor,
		"copy_hits":         st.CopyHits,
		"copy_misses":       st.CopyMisses,
		"fills":             st.Fills,
		"fills_skipped":     st.FillsSkipped,
		"copy_deletes":      st.CopyDeletes,
		"marks_published":   st.MarksPublished,
		"bounded_replies":   st.BoundedReplies,
		"bounded_refreshes": st.BoundedRefreshes,
		"bounded_waits":     st.BoundedWaits,
		"bounded_combined":  st.BoundedCombined,
		"near_hits":         st.NearHits,
		"near_stores":       st.NearStores,
		"near_drops":        st.NearDrops,
	}
}

// AppendStats appends the lines of `stats hotkeys`: rules and marked,
// the counters of TierStats, then one line per hot key:
// "STAT hotkey:<key> <kind> k=<K> split=<0|1> reads=<r/s> writes=<w/s>".
func (t *Tier) AppendStats(dst []byte) []byte {
	st := t.Stats()
	dst = appendStat(dst, "rules", strconv.Itoa(st.Rules))
	dst = appendStat(dst, "marked", strconv.Itoa(st.Marked))
	c := st.counters()
	for _, name := range counterNames {
		dst = appendStat(dst, name, strconv.FormatUint(c[name], 10))
	}
	for _, h := range t.HotKeys() {
		split := "0"
		if h.Split {
			split = "1"
		}
		dst = appendStat(dst, "hotkey:"+h.Key, h.Kind.String()+" k="+strconv.Itoa(h.K)+" split="+split+
			" reads="+strconv.FormatFloat(h.ReadsPerSec, 'f', 0, 64)+" writes="+strconv.FormatFloat(h.WritesPerSec, 'f', 0, 64))
	}
	return dst
}

// appendStat appends "STAT <name> <value>\r\n".
func appendStat(dst []byte, name, value string) []byte {
	dst = append(dst, "STAT "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = append(dst, value...)
	return append(dst, "\r\n"...)
}
