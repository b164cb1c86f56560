package admin

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin/history"
)

// doHeaders is do with extra request headers.
func doHeaders(t *testing.T, s *Server, method, path, body string, hdr map[string]string) reply {
	t.Helper()
	return doReq(t, s, method, path, body, func(req *http.Request) {
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
	})
}

func TestMutatingCallsFromAnotherOriginAreRefused(t *testing.T) {
	st := newState()
	s := startServer(t, Config{Token: "tok"}, st)
	evil := map[string]string{"Origin": "http://127.0.0.1:9", "Sec-Fetch-Site": "same-site", "Authorization": "Bearer tok"}
	for _, c := range []struct{ method, path, body string }{
		{"PUT", "/admin/v1/promotion", `{"threshold": 1}`},
		{"PUT", "/admin/v1/sampler", `{"rate": 1}`},
		{"POST", "/admin/v1/servers/drain", `{"tier": "l2", "addr": "127.0.0.1:1"}`},
		{"DELETE", "/admin/v1/promotion", ``},
	} {
		r := doHeaders(t, s, c.method, c.path, c.body, evil)
		if r.code != http.StatusForbidden || r.hdr.Get("Content-Type") != "application/json" || !strings.Contains(r.json(t)["error"].(string), "another origin") {
			t.Errorf("%s %s from another origin: %d %s", c.method, c.path, r.code, r.body)
		}
	}
	if p := st.Promotion(); p.Threshold != 32 {
		t.Fatalf("N changed to %d", p.Threshold)
	}
	// Reads stay open to other origins' requests (the browser keeps their
	// replies from the other page unless CORS allows it, and it does not).
	if r := doHeaders(t, s, "GET", "/admin/v1/promotion", "", evil); r.code != 200 {
		t.Fatalf("GET with another Origin: %d", r.code)
	}
	same := map[string]string{"Origin": "http://" + s.Addr(), "Sec-Fetch-Site": "same-origin", "Authorization": "Bearer tok"}
	if r := doHeaders(t, s, "PUT", "/admin/v1/promotion", `{"threshold": 7}`, same); r.code != 200 || st.Promotion().Threshold != 7 {
		t.Fatalf("PUT from the page's own origin: %d %s", r.code, r.body)
	}
}

func TestPageAndItsAssetsAreSelfContained(t *testing.T) {
	s := startServer(t, Config{}, newState())
	for path, ctype := range map[string]string{"/": "text/html", "/static/page.js": "text/javascript", "/static/page.css": "text/css"} {
		r := do(t, s, "GET", path, "", "")
		if r.code != 200 || !strings.HasPrefix(r.hdr.Get("Content-Type"), ctype) {
			t.Fatalf("%s: %d %s", path, r.code, r.hdr.Get("Content-Type"))
		}
		if csp := r.hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") {
			t.Fatalf("%s: CSP %q", path, csp)
		}
		// Nothing is fetched from another host: no absolute URL to one.
		for _, bad := range []string{"http://", "https://", "//fonts.", "cdn"} {
			if strings.Contains(string(r.body), bad) {
				t.Errorf("%s refers to %q", path, bad)
			}
		}
	}
}

func TestEndpointIndexListsWhatExists(t *testing.T) {
	s := startServer(t, Config{}, newState())
	var idx struct {
		Endpoints []struct {
			Path    string
			Methods []string
		}
	}
	if err := json.Unmarshal(do(t, s, "GET", "/admin/v1/", "", "").body, &idx); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range idx.Endpoints {
		got[e.Path] = strings.Join(e.Methods, ",")
	}
	if got["/admin/v1/promotion"] != "GET,PUT" || got["/admin/v1/history"] != "GET" || got["/admin/v1/promotion/model"] != "GET" {
		t.Fatalf("index %v", got)
	}
	// No TopKeys dependency: no topkeys endpoint, and the page shows the
	// section as not configured.
	if _, ok := got["/admin/v1/topkeys"]; ok {
		t.Fatal("topkeys listed without a TopKeyView")
	}
}

func TestHistoryEndpointServesTheRecordedSeries(t *testing.T) {
	st := newState()
	st.snap = Snapshot{TierRequests: []TierCount{{"l1", "hit", 0}}}
	s := startServer(t, Config{}, st)
	// Drive the recorder's history by hand: the server's own goroutine adds
	// points too, so only the ones made here are asserted, by time.
	base := time.Now().Add(time.Hour)
	s.hist.Stop()
	add := func(d time.Duration, l1Hits, l1Reads uint64) {
		s.hist.Add(base.Add(d), history.Counters{L1Hits: l1Hits, L1Reads: l1Reads, Requests: l1Reads})
	}
	add(0, 0, 0)
	add(time.Second, 3, 4)
	add(2*time.Second, 3, 8)
	var h historyReply
	if err := json.Unmarshal(do(t, s, "GET", "/admin/v1/history", "", "").body, &h); err != nil {
		t.Fatal(err)
	}
	n := len(h.Points)
	if n < 2 || h.Points[n-2].HitL1 != 0.75 || h.Points[n-1].HitL1 != 0 || h.Points[n-1].RPS != 4 || h.IntervalSeconds != 1 {
		t.Fatalf("history %+v", h)
	}
	since := h.Points[n-2].T
	if err := json.Unmarshal(do(t, s, "GET", "/admin/v1/history?since="+strconv.FormatInt(since, 10), "", "").body, &h); err != nil || len(h.Points) != 1 {
		t.Fatalf("since: %v %+v", err, h)
	}
	if r := do(t, s, "GET", "/admin/v1/history?since=x", "", ""); r.code != 400 || r.json(t)["field"] != "since" {
		t.Fatalf("bad since: %d %s", r.code, r.body)
	}
}

func TestModelEndpointAtTheThresholdInForce(t *testing.T) {
	st := newState() // N = 32
	s := startServer(t, Config{}, st)
	s.hist.Stop()
	base := time.Now().Add(time.Hour)
	s.hist.Add(base, history.Counters{})
	s.hist.Add(base.Add(time.Second), history.Counters{L2Hits: 100, Promotions: 25})
	var m modelReply
	if err := json.Unmarshal(do(t, s, "GET", "/admin/v1/promotion/model", "", "").body, &m); err != nil {
		t.Fatal(err)
	}
	// The long-tail paper's figures for N = 32.
	for k, want := range map[int]float64{10: 0.2720, 32: 0.6379, 100: 0.9582} {
		if math.Abs(m.Model[k-1]-want) > 5e-5 {
			t.Errorf("P(32, %d) = %.4f, want %.4f", k, m.Model[k-1], want)
		}
	}
	if m.Threshold != 32 || m.TrialsTo90 != 73 || len(m.Model) != 200 {
		t.Fatalf("model %+v", m)
	}
	if m.Observed != 0.25 || m.ImpliedN != 4 || math.Abs(m.ObservedFit[0]-0.25) > 1e-12 || m.L2Hits != 100 || m.Promotions != 25 {
		t.Fatalf("observed %v implied %d fit[0] %v", m.Observed, m.ImpliedN, m.ObservedFit[0])
	}
}

type topKeys []TopKey

func (k topKeys) TopKeys(n int, _ time.Duration) []TopKey { return k[:min(n, len(k))] }

func TestTopKeysEndpoint(t *testing.T) {
	st := newState()
	cfg := Config{Listen: "127.0.0.1:0"}
	s, err := New(cfg, Deps{Promotion: st, TopKeys: topKeys{{Key: "a", PerSec: 3}, {Key: "b", PerSec: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(t.Context()) })
	var r struct{ Keys []TopKey }
	if err := json.Unmarshal(do(t, s, "GET", "/admin/v1/topkeys?n=1", "", "").body, &r); err != nil || len(r.Keys) != 1 || r.Keys[0].Key != "a" {
		t.Fatalf("topkeys: %v %+v", err, r)
	}
	for _, bad := range []string{"0", "x", "1001"} {
		if rep := do(t, s, "GET", "/admin/v1/topkeys?n="+bad, "", ""); rep.code != 400 {
			t.Errorf("n=%s: %d", bad, rep.code)
		}
	}
}

func TestServerUpAndLocalityMetrics(t *testing.T) {
	st := newState()
	st.tiers[1].Servers = append(st.tiers[1].Servers, ServerStatus{Addr: "127.0.0.1:2", State: "down"})
	st.snap.LocalityRequests = []LabeledCount{{"forwarded", 4}}
	st.snap.LocalityCacheHits, st.snap.LocalityCacheMisses = 98, 2
	st.snap.LocalityCounterBytes, st.snap.LocalityForwardedBytes = 120, 9000
	st.snap.LocalityLinkRequests, st.snap.LocalityLinkStallHeld = 31, 3
	st.snap.StallRefused, st.snap.StallHeld, st.snap.LocalityLateRefused = 5, []LabeledCount{{"l2", 7}}, 2
	st.snap.AuthAttempts, st.snap.AuthFailures = 10, 3
	st.snap.LocalityDecisions, st.snap.LocalityMovesStarted, st.snap.LocalityMoveReturns, st.snap.LocalityMovesRateLimited = 40, 11, 2, 6
	s := startServer(t, Config{}, st)
	fams := parseMetrics(t, do(t, s, "GET", "/metrics", "", "").body)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"strata_server_up", map[string]string{"tier": "l2", "server": "127.0.0.1:1"}, 1},
		{"strata_server_up", map[string]string{"tier": "l2", "server": "127.0.0.1:2"}, 0},
		{"strata_locality_requests_total", map[string]string{"result": "forwarded"}, 4},
		{"strata_locality_requests_total", map[string]string{"result": "local"}, 0},
		{"strata_locality_requests_total", map[string]string{"result": "owner_unreachable"}, 0},
		{"strata_locality_migrations_total", nil, 0},
		{"strata_locality_migrations_in_flight", nil, 0},
		{"strata_locality_decisions_total", nil, 40},
		{"strata_locality_moves_started_total", nil, 11},
		{"strata_locality_move_returns_total", nil, 2},
		{"strata_locality_moves_rate_limited_total", nil, 6},
		{"strata_locality_location_cache_total", map[string]string{"result": "hit"}, 98},
		{"strata_locality_location_cache_total", map[string]string{"result": "miss"}, 2},
		{"strata_locality_counter_bytes_total", nil, 120},
		{"strata_locality_forwarded_bytes_total", nil, 9000},
		{"strata_locality_link_requests_total", nil, 31},
		{"strata_locality_link_stall_held_total", nil, 3},
		{"strata_stall_refused_writes_total", nil, 5},
		{"strata_locality_late_writes_refused_total", nil, 2},
		{"strata_auth_attempts_total", map[string]string{"result": "ok"}, 7},
		{"strata_auth_attempts_total", map[string]string{"result": "failed"}, 3},
		{"strata_stall_held_writes_total", map[string]string{"tier": "l2"}, 7},
	} {
		if got := value(t, fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
