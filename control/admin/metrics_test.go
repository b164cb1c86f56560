package admin

import (
	"bytes"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ParseMetrics parses a /metrics body with Prometheus' own text parser.
func parseMetrics(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, body)
	}
	return fams
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("metric %s missing", name)
	}
next:
	for _, m := range f.Metric {
		for _, lp := range m.Label {
			if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("metric %s%v missing", name, labels)
	return 0
}

func TestMetricsFromSnapshot(t *testing.T) {
	st := newState()
	st.snap = Snapshot{
		Requests: []RequestCount{{"get", "hit", 5}, {"get", "miss", 2}, {"set", "stored", 3}},
		Latencies: []Histogram{{
			Op: "get", Bounds: []float64{0.001, 0.01}, Counts: []uint64{4, 6}, Count: 7, SumSeconds: 0.05,
		}},
		TierRequests:  []TierCount{{"l1", "hit", 3}, {"l2", "hit", 2}, {"l2", "miss", 2}},
		Promotions:    []LabeledCount{{"attempted", 2}, {"done", 1}},
		BackendErrors: []BackendErrorCount{{"l2", "127.0.0.1:1", "timeout", 4}, {"l2", "127.0.0.1:1", "timeout", 1}},
		TierUsage:     []TierUsage{{Tier: "l1", Items: 9, Bytes: 900, Evictions: 1}},

		ConnectionsCurrent: 2, ConnectionsTotal: 11,
		SamplerRecords: 40, SamplerDropped: 3, SampleRate: 100,
		PromotionThreshold: 32,
	}
	s := startServer(t, Config{Token: "tok"}, st)
	r := do(t, s, "GET", "/metrics", "", "")
	if r.code != 200 {
		t.Fatalf("metrics: %d", r.code)
	}
	fams := parseMetrics(t, r.body)
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"strata_requests_total", map[string]string{"op": "get", "result": "hit"}, 5},
		{"strata_requests_total", map[string]string{"op": "set", "result": "stored"}, 3},
		{"strata_request_duration_seconds", map[string]string{"op": "get"}, 7},
		{"strata_tier_requests_total", map[string]string{"tier": "l2", "result": "miss"}, 2},
		{"strata_promotions_total", map[string]string{"result": "done"}, 1},
		{"strata_backend_errors_total", map[string]string{"tier": "l2", "server": "127.0.0.1:1", "kind": "timeout"}, 5},
		{"strata_tier_items", map[string]string{"tier": "l1"}, 9},
		{"strata_tier_bytes", map[string]string{"tier": "l1"}, 900},
		{"strata_tier_evictions_total", map[string]string{"tier": "l1"}, 1},
		{"strata_connections", nil, 2},
		{"strata_connections_total", nil, 11},
		{"strata_sampler_records_total", nil, 40},
		{"strata_sampler_dropped_total", nil, 3},
		{"strata_sampler_rate", nil, 100},
		{"strata_promotion_threshold", nil, 32},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	h := fams["strata_request_duration_seconds"].Metric[0].Histogram
	if h.GetSampleSum() != 0.05 || len(h.Bucket) != 3 || h.Bucket[1].GetCumulativeCount() != 6 || h.Bucket[2].GetCumulativeCount() != 7 || h.Bucket[1].GetUpperBound() != 0.01 {
		t.Fatalf("histogram = %v", h)
	}
	if fams["strata_requests_total"].GetType() != dto.MetricType_COUNTER || fams["strata_connections"].GetType() != dto.MetricType_GAUGE {
		t.Fatal("wrong metric types")
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Fatal("the Go runtime collector is not registered")
	}

	// Counters are read at scrape time: a change shows on the next scrape.
	// The change replaces the slice, as a data plane's fresh snapshot
	// does: the history recorder may be reading the one lent before.
	st.mu.Lock()
	reqs := append([]RequestCount(nil), st.snap.Requests...)
	reqs[0].Count = 50
	st.snap.Requests = reqs
	st.mu.Unlock()
	fams = parseMetrics(t, do(t, s, "GET", "/metrics", "", "").body)
	if got := value(t, fams, "strata_requests_total", map[string]string{"op": "get", "result": "hit"}); got != 50 {
		t.Fatalf("after change: %v", got)
	}
}
