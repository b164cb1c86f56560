package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/stall"
)

// state is an in-memory stand-in for the data plane behind the API. The
// real wiring is tested end to end in cmd/strata; here the HTTP layer is.
type state struct {
	mu        sync.Mutex
	promotion Promotion
	rate      uint64
	tiers     []TierStatus
	snap      Snapshot
}

func (s *state) Promotion() Promotion {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.promotion
	p.Rules = append([]Rule(nil), p.Rules...)
	return p
}

func (s *state) SetPromotion(p Promotion) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.promotion = p
	return nil
}

func (s *state) Sampler() SamplerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return SamplerStatus{Rate: s.rate, Records: 7, Dropped: 1}
}

func (s *state) SetSampleRate(r uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r == 3 {
		return errors.New("three is refused by the sampler")
	}
	s.rate = r
	return nil
}

func (s *state) Report() any { return map[string]any{"families": []string{"user:{N}"}} }

func (s *state) Tiers() []TierStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TierStatus(nil), s.tiers...)
}

func (s *state) EffectiveConfig() any {
	return map[string]any{"admin": map[string]any{"token_file": "(redacted)"}}
}

func (s *state) Metrics(out *Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*out = s.snap
}

func newState() *state {
	return &state{
		promotion: Promotion{Threshold: 32, L1MaxTTL: Duration(time.Minute)},
		rate:      0,
		tiers: []TierStatus{
			{Name: "l1", Kind: KindEmbedded, Counters: map[string]uint64{"hits": 1}},
			{Name: "l2", Kind: KindMemcached, Servers: []ServerStatus{{Addr: "127.0.0.1:1", Weight: 1, State: ServerUp}}},
		},
	}
}

func startServer(t *testing.T, cfg Config, st *state) *Server {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(cfg, Deps{Promotion: st, Sampler: st, Tiers: st, Config: st, Metrics: st, Clock: stall.Process()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return s
}

type reply struct {
	code int
	body []byte
	hdr  http.Header
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("reply is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

func do(t *testing.T, s *Server, method, path, token, body string) reply {
	t.Helper()
	return doReq(t, s, method, path, body, func(req *http.Request) {
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
	})
}

// doReq sends one request to s, edit having set what the caller needs,
// and reads the whole reply.
func doReq(t *testing.T, s *Server, method, path, body string, edit func(*http.Request)) reply {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.Addr()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	edit(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{code: resp.StatusCode, body: b, hdr: resp.Header}
}

func TestEndpointsGoodInput(t *testing.T) {
	st := newState()
	s := startServer(t, Config{}, st)

	if r := do(t, s, "GET", "/healthz", "", ""); r.code != 200 || r.json(t)["status"] != "ok" {
		t.Fatalf("healthz: %d %s", r.code, r.body)
	}
	if r := do(t, s, "GET", "/readyz", "", ""); r.code != 200 {
		t.Fatalf("readyz: %d %s", r.code, r.body)
	}
	if r := do(t, s, "GET", "/admin/v1/config", "", ""); r.code != 200 || !strings.Contains(string(r.body), "(redacted)") {
		t.Fatalf("config: %d %s", r.code, r.body)
	}

	r := do(t, s, "GET", "/admin/v1/promotion", "", "")
	if r.code != 200 {
		t.Fatalf("get promotion: %d %s", r.code, r.body)
	}
	var p Promotion
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Threshold != 32 || time.Duration(p.L1MaxTTL) != time.Minute || p.Rules == nil || len(p.Rules) != 0 {
		t.Fatalf("get promotion = %+v", p)
	}
	if !strings.Contains(string(r.body), `"l1_max_ttl": "60s"`) {
		t.Fatalf("l1_max_ttl not spelt in seconds: %s", r.body)
	}

	r = do(t, s, "PUT", "/admin/v1/promotion", "", `{"threshold": 1, "rules": [{"prefix": "photos:", "threshold": 64}], "l1_max_ttl": "30s"}`)
	if r.code != 200 {
		t.Fatalf("put promotion: %d %s", r.code, r.body)
	}
	got := st.Promotion()
	if got.Threshold != 1 || len(got.Rules) != 1 || got.Rules[0] != (Rule{"photos:", 64}) || time.Duration(got.L1MaxTTL) != 30*time.Second {
		t.Fatalf("after put: %+v", got)
	}
	// Absent fields keep their values.
	if r = do(t, s, "PUT", "/admin/v1/promotion", "", `{"threshold": 8}`); r.code != 200 {
		t.Fatalf("partial put: %d %s", r.code, r.body)
	}
	got = st.Promotion()
	if got.Threshold != 8 || len(got.Rules) != 1 || time.Duration(got.L1MaxTTL) != 30*time.Second {
		t.Fatalf("after partial put: %+v", got)
	}
	if r = do(t, s, "PUT", "/admin/v1/promotion", "", `{"rules": []}`); r.code != 200 || len(st.Promotion().Rules) != 0 {
		t.Fatalf("clearing rules: %d %s", r.code, r.body)
	}

	if r = do(t, s, "PUT", "/admin/v1/sampler", "", `{"rate": 1000}`); r.code != 200 || r.json(t)["rate"] != float64(1000) {
		t.Fatalf("put sampler: %d %s", r.code, r.body)
	}
	if r = do(t, s, "GET", "/admin/v1/sampler", "", ""); r.code != 200 || r.json(t)["rate"] != float64(1000) || r.json(t)["records"] != float64(7) {
		t.Fatalf("get sampler: %d %s", r.code, r.body)
	}
	if r = do(t, s, "PUT", "/admin/v1/sampler", "", `{"rate": 0}`); r.code != 200 || st.Sampler().Rate != 0 {
		t.Fatalf("rate 0 turns sampling off: %d %s", r.code, r.body)
	}
	if r = do(t, s, "GET", "/admin/v1/sampler/report", "", ""); r.code != 200 || !strings.Contains(string(r.body), "user:{N}") {
		t.Fatalf("report: %d %s", r.code, r.body)
	}
	r = do(t, s, "GET", "/admin/v1/tiers", "", "")
	var tiers struct{ Tiers []TierStatus }
	if err := json.Unmarshal(r.body, &tiers); err != nil || r.code != 200 {
		t.Fatalf("tiers: %d %s %v", r.code, r.body, err)
	}
	if len(tiers.Tiers) != 2 || tiers.Tiers[1].Servers[0].Addr != "127.0.0.1:1" || tiers.Tiers[0].Counters["hits"] != 1 {
		t.Fatalf("tiers = %+v", tiers.Tiers)
	}
	if r = do(t, s, "GET", "/", "", ""); r.code != 200 || !strings.Contains(string(r.body), "<html") ||
		strings.Contains(string(r.body), "http://") || strings.Contains(string(r.body), "https://") {
		t.Fatalf("page: %d, or it names an external asset", r.code)
	}
}

func TestEndpointsBadInput(t *testing.T) {
	st := newState()
	s := startServer(t, Config{}, st)
	cases := []struct {
		name, method, path, body string
		code                     int
		field                    string
	}{
		{"bad json", "PUT", "/admin/v1/promotion", `{"threshold": `, 400, ""},
		{"not an object", "PUT", "/admin/v1/promotion", `[1]`, 400, ""},
		{"empty body", "PUT", "/admin/v1/promotion", ``, 400, ""},
		{"trailing data", "PUT", "/admin/v1/promotion", `{"threshold": 2} {}`, 400, ""},
		{"threshold 0", "PUT", "/admin/v1/promotion", `{"threshold": 0}`, 400, "threshold"},
		{"threshold negative", "PUT", "/admin/v1/promotion", `{"threshold": -4}`, 400, "threshold"},
		{"threshold too big", "PUT", "/admin/v1/promotion", `{"threshold": 4294967296}`, 400, "threshold"},
		{"threshold string", "PUT", "/admin/v1/promotion", `{"threshold": "8"}`, 400, "threshold"},
		{"unknown field", "PUT", "/admin/v1/promotion", `{"treshold": 8}`, 400, "treshold"},
		{"rule threshold 0", "PUT", "/admin/v1/promotion", `{"rules": [{"prefix": "a:", "threshold": 0}]}`, 400, "rules[0].threshold"},
		{"rule empty prefix", "PUT", "/admin/v1/promotion", `{"rules": [{"prefix": "", "threshold": 2}]}`, 400, "rules[0].prefix"},
		{"rule prefix twice", "PUT", "/admin/v1/promotion", `{"rules": [{"prefix": "a", "threshold": 2}, {"prefix": "a", "threshold": 3}]}`, 400, "rules[1].prefix"},
		{"ttl not a duration", "PUT", "/admin/v1/promotion", `{"l1_max_ttl": "soon"}`, 400, "l1_max_ttl"},
		{"ttl too short", "PUT", "/admin/v1/promotion", `{"l1_max_ttl": "500ms"}`, 400, "l1_max_ttl"},
		{"ttl too long", "PUT", "/admin/v1/promotion", `{"l1_max_ttl": "800h"}`, 400, "l1_max_ttl"},
		{"negative rate", "PUT", "/admin/v1/sampler", `{"rate": -1}`, 400, "rate"},
		{"fractional rate", "PUT", "/admin/v1/sampler", `{"rate": 1.5}`, 400, "rate"},
		{"missing rate", "PUT", "/admin/v1/sampler", `{}`, 400, "rate"},
		{"rate refused by sampler", "PUT", "/admin/v1/sampler", `{"rate": 3}`, 400, "rate"},
		{"rate bad json", "PUT", "/admin/v1/sampler", `{rate: 1}`, 400, ""},
		{"wrong method promotion", "POST", "/admin/v1/promotion", `{}`, 405, ""},
		{"wrong method tiers", "PUT", "/admin/v1/tiers", `{}`, 405, ""},
		{"wrong method healthz", "DELETE", "/healthz", ``, 405, ""},
		{"unknown api path", "GET", "/admin/v1/nope", ``, 404, ""},
		{"unknown path", "GET", "/nope", ``, 404, ""},
	}
	before := st.Promotion()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, s, c.method, c.path, "", c.body)
			if r.code != c.code {
				t.Fatalf("code %d, want %d: %s", r.code, c.code, r.body)
			}
			if ct := r.hdr.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("content type %q", ct)
			}
			m := r.json(t)
			if msg, _ := m["error"].(string); msg == "" {
				t.Fatalf("no error message: %s", r.body)
			}
			if f, _ := m["field"].(string); f != c.field {
				t.Fatalf("field %q, want %q: %s", f, c.field, r.body)
			}
			if c.code == 405 && r.hdr.Get("Allow") == "" {
				t.Fatal("405 without Allow")
			}
		})
	}
	after := st.Promotion()
	if after.Threshold != before.Threshold || len(after.Rules) != len(before.Rules) || after.L1MaxTTL != before.L1MaxTTL {
		t.Fatalf("a refused PUT changed the settings: %+v → %+v", before, after)
	}
}

func TestReadyzReportsPoolWithoutServers(t *testing.T) {
	st := newState()
	st.tiers[1].Servers[0].State = "down"
	s := startServer(t, Config{}, st)
	r := do(t, s, "GET", "/readyz", "", "")
	if r.code != 503 || !strings.Contains(r.json(t)["error"].(string), "l2") {
		t.Fatalf("readyz with every L2 server down: %d %s", r.code, r.body)
	}
	st.mu.Lock()
	st.tiers[1].Servers = append(st.tiers[1].Servers, ServerStatus{Addr: "127.0.0.1:2", State: ServerUp})
	st.mu.Unlock()
	if r := do(t, s, "GET", "/readyz", "", ""); r.code != 200 {
		t.Fatalf("readyz with one L2 server up: %d %s", r.code, r.body)
	}
}

func TestTokenEnforced(t *testing.T) {
	st := newState()
	s := startServer(t, Config{Token: "s3cret"}, st)
	for _, path := range []string{"/admin/v1/config", "/admin/v1/promotion", "/admin/v1/sampler", "/admin/v1/tiers", "/admin/v1/sampler/report", "/admin/v1/nope"} {
		for _, tok := range []string{"", "wrong", "s3cre", "s3cret2"} {
			r := do(t, s, "GET", path, tok, "")
			if r.code != 401 || r.json(t)["error"] == "" || r.hdr.Get("WWW-Authenticate") == "" {
				t.Fatalf("%s with token %q: %d %s", path, tok, r.code, r.body)
			}
		}
	}
	if r := do(t, s, "PUT", "/admin/v1/promotion", "wrong", `{"threshold": 1}`); r.code != 401 || st.Promotion().Threshold != 32 {
		t.Fatalf("PUT with a wrong token: %d, threshold %d", r.code, st.Promotion().Threshold)
	}
	for _, path := range []string{"/admin/v1/config", "/admin/v1/promotion", "/admin/v1/sampler", "/admin/v1/tiers", "/admin/v1/sampler/report"} {
		if r := do(t, s, "GET", path, "s3cret", ""); r.code != 200 {
			t.Fatalf("%s with the token: %d %s", path, r.code, r.body)
		}
	}
	if r := do(t, s, "PUT", "/admin/v1/promotion", "s3cret", `{"threshold": 1}`); r.code != 200 || st.Promotion().Threshold != 1 {
		t.Fatalf("PUT with the token: %d %s", r.code, r.body)
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if r := do(t, s, "GET", path, "", ""); r.code != 200 {
			t.Fatalf("%s must stay open: %d", path, r.code)
		}
	}
	// A replaced token applies to the next request.
	if err := s.SetToken("other"); err != nil {
		t.Fatal(err)
	}
	if r := do(t, s, "GET", "/admin/v1/config", "s3cret", ""); r.code != 401 {
		t.Fatalf("old token after SetToken: %d", r.code)
	}
	if r := do(t, s, "GET", "/admin/v1/config", "other", ""); r.code != 200 {
		t.Fatalf("new token after SetToken: %d", r.code)
	}
}

func TestNonLoopbackNeedsToken(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:11299", ":11299", "[::]:11299", "10.1.2.3:11299", "admin.example:11299"} {
		_, err := New(Config{Listen: addr}, Deps{})
		if !errors.Is(err, ErrExposed) {
			t.Fatalf("%s without a token: err = %v, want ErrExposed", addr, err)
		}
		if _, err := New(Config{Listen: addr, Token: "t"}, Deps{}); err != nil {
			t.Fatalf("%s with a token: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0", "127.0.0.2:0"} {
		if _, err := New(Config{Listen: addr}, Deps{}); err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
	}
	if _, err := New(Config{Listen: "no-port"}, Deps{}); err == nil {
		t.Fatal("an address without a port was accepted")
	}
}

func TestStopIsIdempotentAndFreesThePort(t *testing.T) {
	st := newState()
	s, err := New(Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Tiers: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("Start after Stop succeeded")
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Fatal("still answering after Stop")
	}
}

// doHost is do with the Host header a browser would send for a name that
// resolves to this machine.
func doHost(t *testing.T, s *Server, method, path, host, token, body string) reply {
	t.Helper()
	return doReq(t, s, method, path, body, func(req *http.Request) {
		req.Host = host
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
	})
}

func TestForeignHostRefusedWithoutToken(t *testing.T) {
	st := newState()
	s := startServer(t, Config{AllowedHosts: []string{"Strata.Internal"}}, st)
	_, port, _ := strings.Cut(s.Addr(), ":")
	// A rebinding page: its own name, resolving to 127.0.0.1.
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port, "10.0.0.1:" + port} {
		r := doHost(t, s, "PUT", "/admin/v1/promotion", host, "", `{"threshold": 2}`)
		if r.code != http.StatusForbidden || r.json(t)["error"] == "" {
			t.Fatalf("PUT with Host %q: %d %s", host, r.code, r.body)
		}
		if st.Promotion().Threshold != 32 {
			t.Fatalf("Host %q changed the threshold to %d", host, st.Promotion().Threshold)
		}
		for _, path := range []string{"/admin/v1/config", "/metrics", "/"} {
			if r := doHost(t, s, "GET", path, host, "", ""); r.code != http.StatusForbidden {
				t.Fatalf("GET %s with Host %q: %d", path, host, r.code)
			}
		}
	}
	for i, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port, "strata.internal:" + port} {
		want := uint32(40 + i)
		r := doHost(t, s, "PUT", "/admin/v1/promotion", host, "", fmt.Sprintf(`{"threshold": %d}`, want))
		if r.code != http.StatusOK || st.Promotion().Threshold != want {
			t.Fatalf("PUT with Host %q: %d %s (threshold %d)", host, r.code, r.body, st.Promotion().Threshold)
		}
	}
	// With a token, the token protects the API and any name may be used
	// (a proxy in front, a service name).
	if err := s.SetToken("tok"); err != nil {
		t.Fatal(err)
	}
	if r := doHost(t, s, "PUT", "/admin/v1/promotion", "evil.example", "tok", `{"threshold": 7}`); r.code != http.StatusOK || st.Promotion().Threshold != 7 {
		t.Fatalf("PUT with the token and a foreign Host: %d %s", r.code, r.body)
	}
}

func TestAllowedHostsValidated(t *testing.T) {
	for _, h := range []string{"", "a b", "host:80", "http://x"} {
		if _, err := New(Config{Listen: "127.0.0.1:0", AllowedHosts: []string{h}}, Deps{}); err == nil {
			t.Fatalf("allowed host %q accepted", h)
		}
	}
	if _, err := New(Config{Listen: "127.0.0.1:0", AllowedHosts: []string{"cache-admin.local", "::1", "10.0.0.7"}}, Deps{}); err != nil {
		t.Fatal(err)
	}
}

// The page's history needs a clock to sample Metrics on: a server given
// Metrics without one is refused, not left without history.
func TestMetricsWithoutAClockIsRefused(t *testing.T) {
	st := newState()
	_, err := New(Config{Listen: "127.0.0.1:0"}, Deps{Metrics: st})
	if err == nil || !strings.Contains(err.Error(), "Deps.Clock") {
		t.Fatalf("err = %v, want the missing clock named", err)
	}
}
