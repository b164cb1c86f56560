package shards

import (
	"encoding/json"

	"github.com/strata-cache/strata/control/store"
)

// reportCache keeps the agents' reports decoded, by row: a row whose
// ModRevision has not moved holds the bytes it was decoded from, so the
// leader's rounds (every probe interval) decode only the reports written
// since the one before. A report carries three per-shard rate arrays, and
// decoding them every round was most of an idle leader's CPU. Only the
// leader's round goroutine uses it.
type reportCache map[string]cachedReport

type cachedReport struct {
	mod int64
	rep Report
	ok  bool // the row parsed; a row that does not is left out
}

// decode returns the reports of rows (a tier's agents' rows, as
// readReports lists them), decoding only rows written since the previous
// call, and forgets the rows gone since. Callers must not modify the
// reports it returns: later rounds share them.
func (c reportCache) decode(rows []store.Row) []Report {
	out := make([]Report, 0, len(rows))
	seen := make(map[string]bool, len(rows))
	for _, row := range rows {
		seen[row.Key] = true
		cr, hit := c[row.Key]
		if !hit || cr.mod != row.ModRevision {
			cr = cachedReport{mod: row.ModRevision}
			cr.ok = json.Unmarshal(row.Value, &cr.rep) == nil
			c[row.Key] = cr
		}
		if cr.ok {
			out = append(out, cr.rep)
		}
	}
	for k := range c {
		if !seen[k] {
			delete(c, k)
		}
	}
	return out
}
