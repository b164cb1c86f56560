package admin

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HotKeyView lists the hot keys strata splits or sees, and their counters.
type HotKeyView interface {
	HotKeys() HotKeys
}

// HotKeys is the body of GET /admin/v1/hotkeys.
type HotKeys struct {
	Keys []HotKey `json:"keys"`
	// Counters are the hot-key tier's totals (split_ops, sub_ops, ...).
	Counters map[string]uint64 `json:"counters"`
}

// HotKey is one key under a hot-key rule that is split or measured hot.
type HotKey struct {
	Key  string `json:"key"`
	Kind string `json:"kind"` // counter, list or read
	K    int    `json:"k"`
	// Split: its writes (counter, list) or reads (read) go to its parts now.
	Split        bool      `json:"split"`
	ReadsPerSec  float64   `json:"reads_per_sec"`
	WritesPerSec float64   `json:"writes_per_sec"`
	Since        time.Time `json:"since"`
}

func (s *Server) getHotKeys(w http.ResponseWriter, _ *http.Request) {
	hk := s.deps.HotKeys.HotKeys()
	if hk.Keys == nil {
		hk.Keys = []HotKey{}
	}
	writeJSON(w, http.StatusOK, hk)
}

// hotKeyCollector exports the hot-key counters as strata_hotkeys_* at
// scrape time. Labels come from the fixed counter names, never from keys.
type hotKeyCollector struct {
	src    HotKeyView
	ops    *prometheus.Desc
	marked *prometheus.Desc
}

var _ prometheus.Collector = (*hotKeyCollector)(nil)

func newHotKeyCollector(src HotKeyView) *hotKeyCollector {
	return &hotKeyCollector{
		src:    src,
		ops:    prometheus.NewDesc("strata_hotkeys_events_total", "Hot-key tier events by kind (split_ops, sub_ops, copy_hits, fills, decr_floor, ...).", []string{"event"}, nil),
		marked: prometheus.NewDesc("strata_hotkeys_keys", "Keys under a hot-key rule now split or measured hot.", nil, nil),
	}
}

func (c *hotKeyCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.ops
	ch <- c.marked
}

func (c *hotKeyCollector) Collect(ch chan<- prometheus.Metric) {
	hk := c.src.HotKeys()
	for name, v := range hk.Counters {
		ch <- prometheus.MustNewConstMetric(c.ops, prometheus.CounterValue, float64(v), name)
	}
	ch <- prometheus.MustNewConstMetric(c.marked, prometheus.GaugeValue, float64(len(hk.Keys)))
}
