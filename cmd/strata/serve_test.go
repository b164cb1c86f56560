package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/bradfitz/gomemcache/memcache"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/poll"
)

func scrape(t *testing.T, ta *testApp) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := httpDo(t, "GET", ta.adminURL("/metrics"), "", "")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// metricValue returns the value of the series of name whose labels include
// want, or 0 when there is none.
func metricValue(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.Metric {
		for _, lp := range m.Label {
			if v, ok := want[lp.GetName()]; ok && v != lp.GetValue() {
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
	return 0
}

func TestMetricsGrowWithRequests(t *testing.T) {
	ta := startApp(t, "")
	mc := memcache.New(ta.proxy.Addr())
	mc.Timeout = 2 * time.Second
	for i := 0; i < 20; i++ {
		if err := mc.Set(&memcache.Item{Key: "k" + strconv.Itoa(i), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 30; i++ {
		_, err := mc.Get("k" + strconv.Itoa(i))
		if i < 20 && err != nil || i >= 20 && !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("get %d: %v", i, err)
		}
	}
	fams := scrape(t, ta)
	sets := map[string]string{"op": "set", "result": "stored"}
	// gomemcache reads with gets, for the CAS of each item.
	hits := map[string]string{"op": "gets", "result": "hit"}
	misses := map[string]string{"op": "gets", "result": "miss"}
	if v := metricValue(fams, "strata_requests_total", sets); v != 20 {
		t.Fatalf("sets = %v, want 20", v)
	}
	if v := metricValue(fams, "strata_requests_total", hits); v != 20 {
		t.Fatalf("get hits = %v, want 20", v)
	}
	if v := metricValue(fams, "strata_requests_total", misses); v != 10 {
		t.Fatalf("get misses = %v, want 10", v)
	}
	if v := metricValue(fams, "strata_request_duration_seconds", map[string]string{"op": "gets"}); v != 30 {
		t.Fatalf("get latency observations = %v, want 30", v)
	}
	// gets reads L2 only; plain gets go through L1 first.
	tc := mctext.Dial(t, ta.proxy.Addr())
	for i := 0; i < 10; i++ {
		if _, ok := tc.Get("k" + strconv.Itoa(i)); !ok {
			t.Fatalf("get k%d missed", i)
		}
	}
	fams = scrape(t, ta)
	if v := metricValue(fams, "strata_tier_requests_total", map[string]string{"tier": "l2", "result": "hit"}); v != 10 {
		t.Fatalf("l2 hits = %v, want 10", v)
	}
	if v := metricValue(fams, "strata_tier_requests_total", map[string]string{"tier": "l1", "result": "miss"}); v != 10 {
		t.Fatalf("l1 misses = %v, want 10", v)
	}
	if v := metricValue(fams, "strata_requests_total", map[string]string{"op": "get", "result": "hit"}); v != 10 {
		t.Fatalf("get hits = %v, want 10", v)
	}
	if v := metricValue(fams, "strata_connections_total", nil); v < 1 {
		t.Fatalf("connections_total = %v", v)
	}
	if v := metricValue(fams, "strata_tier_items", map[string]string{"tier": "l2"}); v != 20 {
		t.Fatalf("l2 items = %v, want 20", v)
	}
	if v := metricValue(fams, "strata_promotion_threshold", nil); v != 32 {
		t.Fatalf("threshold gauge = %v", v)
	}
	// The counters grow with the next requests.
	for i := 0; i < 5; i++ {
		if _, err := mc.Get("k0"); err != nil {
			t.Fatal(err)
		}
	}
	fams = scrape(t, ta)
	if v := metricValue(fams, "strata_requests_total", hits); v != 25 {
		t.Fatalf("get hits after 5 more = %v, want 25", v)
	}
	for _, f := range fams {
		for _, m := range f.Metric {
			for _, lp := range m.Label {
				if strings.HasPrefix(lp.GetValue(), "k") && lp.GetName() != "kind" {
					t.Fatalf("a key leaked into label %s of %s", lp.GetName(), f.GetName())
				}
			}
		}
	}
}

func TestPromotionThroughAdminAPI(t *testing.T) {
	ta := startApp(t, "[promotion]\nthreshold = 1000000\n")
	tc := mctext.Dial(t, ta.proxy.Addr())
	if r := tc.Set("photo:1", "hello", 0); r != "STORED" {
		t.Fatalf("set: %q", r)
	}
	// With N = 10^6 an L2 hit is (almost surely) not promoted.
	if v, ok := tc.Get("photo:1"); !ok || v != "hello" {
		t.Fatalf("get: %q %v", v, ok)
	}
	code, body := httpDo(t, "PUT", ta.adminURL("/admin/v1/promotion"), "", `{"threshold": 1, "l1_max_ttl": "30s"}`)
	if code != 200 || !strings.Contains(body, `"threshold": 1`) {
		t.Fatalf("PUT promotion: %d %s", code, body)
	}
	if ta.layered.Policy().Threshold() != 1 || ta.layered.L1MaxTTL() != 30*time.Second {
		t.Fatalf("policy not applied: %s %v", ta.layered.Policy(), ta.layered.L1MaxTTL())
	}
	before := ta.l1.store.Stats().CurrItems
	// The next L2 hit promotes: the item appears in the L1 store.
	for i := 2; i <= 3; i++ {
		key := "photo:" + strconv.Itoa(i)
		tc.Set(key, "v", 0)
		if _, ok := tc.Get(key); !ok {
			t.Fatalf("get %s missed", key)
		}
	}
	poll.Until(t, 2*time.Second, "promoted copies in L1", func() bool { return ta.l1.store.Stats().CurrItems >= before+2 })
	if st := ta.layered.Stats(); st.PromotionsDone < 2 {
		t.Fatalf("promotions done = %d", st.PromotionsDone)
	}
	// The change is logged.
	if !strings.Contains(ta.log.String(), "promotion changed through the admin API") {
		t.Fatalf("change not logged:\n%s", ta.log.String())
	}
	// And reported back by GET, the tiers endpoint and the effective config.
	_, body = httpDo(t, "GET", ta.adminURL("/admin/v1/tiers"), "", "")
	var tiers struct{ Tiers []admin.TierStatus }
	if err := json.Unmarshal([]byte(body), &tiers); err != nil || len(tiers.Tiers) != 2 || tiers.Tiers[0].Counters["promotions_done"] < 2 {
		t.Fatalf("tiers: %v %s", err, body)
	}
	_, body = httpDo(t, "GET", ta.adminURL("/admin/v1/config"), "", "")
	var cfg map[string]any
	err := json.Unmarshal([]byte(body), &cfg)
	section := func(name string) map[string]any { m, _ := cfg[name].(map[string]any); return m }
	if err != nil || section("promotion")["threshold"] != float64(1) || section("l1")["max_ttl"] != "30s" {
		t.Fatalf("effective config: %v %s", err, body)
	}
	// Out of range: 400 naming the field, nothing changes.
	code, body = httpDo(t, "PUT", ta.adminURL("/admin/v1/promotion"), "", `{"threshold": 0}`)
	if code != 400 || !strings.Contains(body, `"field": "threshold"`) || ta.layered.Policy().Threshold() != 1 {
		t.Fatalf("threshold 0: %d %s", code, body)
	}
}

func TestSamplerThroughAdminAPI(t *testing.T) {
	ta := startApp(t, "")
	code, body := httpDo(t, "PUT", ta.adminURL("/admin/v1/sampler"), "", `{"rate": 1}`)
	if code != 200 || ta.sampler.Rate() != 1 {
		t.Fatalf("PUT sampler: %d %s (rate %d)", code, body, ta.sampler.Rate())
	}
	code, body = httpDo(t, "PUT", ta.adminURL("/admin/v1/sampler"), "", `{"rate": -1}`)
	if code != 400 || !strings.Contains(body, `"field": "rate"`) || ta.sampler.Rate() != 1 {
		t.Fatalf("negative rate: %d %s", code, body)
	}
	code, body = httpDo(t, "GET", ta.adminURL("/admin/v1/sampler/report"), "", "")
	if code != 200 || !strings.Contains(body, `"families"`) {
		t.Fatalf("report: %d %s", code, body)
	}
	// At rate 1 every access is recorded.
	tc := mctext.Dial(t, ta.proxy.Addr())
	for i := 0; i < 5; i++ {
		tc.Set("user:"+strconv.Itoa(i), "v", 0)
		tc.Get("user:" + strconv.Itoa(i))
	}
	st := tc.Stats("sampler")
	if st["rate"] != "1" || st["records"] != "10" || st["ring_cap"] == "" {
		t.Fatalf("stats sampler: %v", st)
	}
	if v := metricValue(scrape(t, ta), "strata_sampler_records_total", nil); v != 10 {
		t.Fatalf("strata_sampler_records_total = %v, want 10", v)
	}
	poll.Until(t, 5*time.Second, "the live report to show the family", func() bool {
		_, body := httpDo(t, "GET", ta.adminURL("/admin/v1/sampler/report"), "", "")
		return strings.Contains(body, `"family": "user:{N}"`)
	})
	ta.live.Invalidate() // the next stats sampler builds a fresh report
	if st := tc.Stats("sampler"); st["family:user:{N}:accesses"] != "10" {
		t.Fatalf("stats sampler families: %v", st)
	}
	if !strings.Contains(ta.log.String(), "sample rate changed through the admin API") {
		t.Fatal("sample rate change not logged")
	}
}

func TestStatsLines(t *testing.T) {
	ta := startApp(t, "")
	tc := mctext.Dial(t, ta.proxy.Addr())
	tc.Set("a", "1", 0)
	tc.Get("a")
	st := tc.Stats("")
	for k, want := range map[string]string{
		"strata_l1_kind": "embedded", "strata_l2_kind": "embedded", "strata_l2_curr_items": "1",
		"strata_l1_limit_maxbytes": strconv.Itoa(64 << 20), "strata_promotion_threshold": "32",
		"strata_l1_misses": "1", "strata_l1_max_ttl": "60", "cmd_get": "1",
		"curr_items": "1", "limit_maxbytes": strconv.Itoa(1 << 30),
	} {
		if st[k] != want {
			t.Errorf("STAT %s = %q, want %q", k, st[k], want)
		}
	}
	for _, k := range []string{"strata_l1_evictions", "strata_promotions_attempted", "strata_sampler_dropped", "strata_l2_bytes"} {
		if _, ok := st[k]; !ok {
			t.Errorf("STAT %s missing", k)
		}
	}
}

func TestTokenFromConfig(t *testing.T) {
	tok := writeFile(t, "token", "  tok-123\n")
	ta := startApp(t, fmt.Sprintf("[admin]\ntoken_file = %q\n", tok))
	for _, p := range []string{"/admin/v1/config", "/admin/v1/promotion", "/admin/v1/tiers", "/admin/v1/sampler"} {
		if code, _ := httpDo(t, "GET", ta.adminURL(p), "", ""); code != 401 {
			t.Fatalf("%s without token: %d", p, code)
		}
		if code, _ := httpDo(t, "GET", ta.adminURL(p), "tok-12", ""); code != 401 {
			t.Fatalf("%s with a wrong token: %d", p, code)
		}
		if code, _ := httpDo(t, "GET", ta.adminURL(p), "tok-123", ""); code != 200 {
			t.Fatalf("%s with the token: %d", p, code)
		}
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if code, _ := httpDo(t, "GET", ta.adminURL(p), "", ""); code != 200 {
			t.Fatalf("%s needs no token: %d", p, code)
		}
	}
	_, body := httpDo(t, "GET", ta.adminURL("/admin/v1/config"), "tok-123", "")
	if strings.Contains(body, "tok-123") || !strings.Contains(body, `"token": "(redacted)"`) {
		t.Fatalf("the token is not redacted: %s", body)
	}
}

func TestExposedAdminRefused(t *testing.T) {
	_, err := config.Load("", mustFlags(t, "--admin", "0.0.0.0:11299"))
	if err == nil || !strings.Contains(err.Error(), "--admin:") || !strings.Contains(err.Error(), "reachable from other hosts") {
		t.Fatalf("config: %v", err)
	}
	// The admin package refuses it too, whatever builds it.
	s, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Admin.Listen = "0.0.0.0:0"
	if _, err := buildServer(s, discardLog(), nil); !errors.Is(err, admin.ErrExposed) {
		t.Fatalf("buildServer: %v, want ErrExposed", err)
	}
	// With a token it is accepted (not started: tests stay on loopback).
	tok := writeFile(t, "token", "x")
	if _, err := config.Load("", mustFlags(t, "--admin", "0.0.0.0:11299", "--admin-token-file", tok)); err != nil {
		t.Fatalf("with a token: %v", err)
	}
}

func TestReloadAppliesLiveAndKeepsTheRest(t *testing.T) {
	ta := startApp(t, "[promotion]\nthreshold = 32\n[log]\nlevel = \"info\"\n")
	tc := mctext.Dial(t, ta.proxy.Addr())
	tc.Set("k", "v1", 0)

	// An API change survives a reload that does not touch it.
	if code, body := httpDo(t, "PUT", ta.adminURL("/admin/v1/sampler"), "", `{"rate": 7}`); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	rewrite(t, ta.path, "[promotion]\nthreshold = 8\n[[promotion.rule]]\nprefix = \"a:\"\nthreshold = 2\n"+
		"[log]\nlevel = \"debug\"\n[limits]\nmax_inflight = 16\n[server]\ncluster = \"other\"\ndrain_timeout = \"4s\"\n")
	next, err := config.Load(ta.flags.Path, ta.flags)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ta.Reload(next)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"promotion", "log.level", "server.drain_timeout"} {
		if !slices.Contains(rep.Applied, want) {
			t.Errorf("%s not applied: %v", want, rep.Applied)
		}
	}
	if !slices.Contains(rep.Kept, "limits") || !slices.Contains(rep.Kept, "server (listen, cluster, region, loops)") {
		t.Errorf("kept: %v", rep.Kept)
	}
	p := ta.layered.Policy()
	if p.Threshold() != 8 || p.ThresholdFor([]byte("a:1")) != 2 || ta.sampler.Rate() != 7 || ta.drainTimeout() != 4*time.Second {
		t.Fatalf("after reload: %s, rate %d, drain %v", p, ta.sampler.Rate(), ta.drainTimeout())
	}
	if got := ta.settings().Effective.Limits.MaxInflight; *got != 1024 {
		t.Fatalf("a restart-only setting changed: max_inflight %d", *got)
	}
	// The client connection stayed open and keeps being answered.
	if v, ok := tc.Get("k"); !ok || v != "v1" {
		t.Fatalf("get after reload: %q %v", v, ok)
	}
	logs := ta.log.String()
	if !strings.Contains(logs, "reload: changed") || !strings.Contains(logs, "needs a restart") {
		t.Fatalf("reload not logged:\n%s", logs)
	}

	// A bad file is rejected whole, with its line; nothing changes.
	rewrite(t, ta.path, "[promotion]\nthreshold = 2\n[l1]\nmemroy = \"1GiB\"\n")
	ta.reloadFile(ta.flags)
	if ta.layered.Policy().Threshold() != 8 {
		t.Fatalf("a rejected file changed the threshold to %d", ta.layered.Policy().Threshold())
	}
	if logs := ta.log.String(); !strings.Contains(logs, "reload rejected") || !strings.Contains(logs, "line=4") || !strings.Contains(logs, "key=l1.memroy") {
		t.Fatalf("rejection not logged with its line:\n%s", logs)
	}
	if _, ok := tc.Get("k"); !ok {
		t.Fatal("connection lost after a rejected reload")
	}
}

func TestCtl(t *testing.T) {
	tok := writeFile(t, "token", "ctl-token")
	ta := startApp(t, fmt.Sprintf("[admin]\ntoken_file = %q\n", tok))
	ctl := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"ctl", "--admin", ta.admin.Addr(), "--token-file", tok}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	for _, what := range []string{"config", "promotion", "sampler", "tiers", "report"} {
		code, out, errOut := ctl("get", what)
		if code != 0 || !json.Valid([]byte(out)) || !strings.Contains(out, "\n  ") {
			t.Fatalf("get %s: exit %d %q %q", what, code, out, errOut)
		}
	}
	code, out, errOut := ctl("set", "promotion", "--threshold", "4", "--rule", "photos:=64", "--rule", "a=b=2", "--l1-max-ttl", "20s")
	if code != 0 {
		t.Fatalf("set promotion: %d %s", code, errOut)
	}
	p := ta.layered.Policy()
	if p.Threshold() != 4 || p.ThresholdFor([]byte("photos:1")) != 64 || p.ThresholdFor([]byte("a=b=")) != 2 || ta.layered.L1MaxTTL() != 20*time.Second {
		t.Fatalf("after ctl set promotion: %s %v (%s)", p, ta.layered.L1MaxTTL(), out)
	}
	if code, _, errOut := ctl("set", "promotion", "--threshold", "9"); code != 0 || len(ta.layered.Policy().Rules()) != 2 {
		t.Fatalf("threshold alone must keep the rules: %d %s", code, errOut)
	}
	if code, _, _ := ctl("set", "promotion", "--no-rules"); code != 0 || len(ta.layered.Policy().Rules()) != 0 {
		t.Fatal("--no-rules")
	}
	if code, _, errOut := ctl("set", "sampler", "--rate", "10"); code != 0 || ta.sampler.Rate() != 10 {
		t.Fatalf("set sampler: %d %s", code, errOut)
	}
	// Refusals exit 1 with the server's message.
	code, _, errOut = ctl("set", "promotion", "--threshold", "0")
	if code != 1 || !strings.Contains(errOut, "400") || !strings.Contains(errOut, "threshold: 0 is out of range") {
		t.Fatalf("threshold 0: exit %d %q", code, errOut)
	}
	code, _, errOut = ctl("set", "sampler", "--rate", "-3")
	if code != 1 || !strings.Contains(errOut, "rate:") {
		t.Fatalf("rate -3: exit %d %q", code, errOut)
	}
	var o, e bytes.Buffer
	if code := run([]string{"ctl", "--admin", ta.admin.Addr(), "get", "promotion"}, &o, &e); code != 1 || !strings.Contains(e.String(), "401") {
		t.Fatalf("without the token: exit %d %q", code, e.String())
	}
	if code, _, _ := ctl("get", "nothing"); code != 2 {
		t.Fatalf("unknown target: exit %d, want 2", code)
	}
}

func TestHealthAndReadiness(t *testing.T) {
	ta := startApp(t, "[l1]\nkind = \"none\"\n")
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := httpDo(t, "GET", ta.adminURL(p), "", ""); code != 200 {
			t.Fatalf("%s: %d %s", p, code, body)
		}
	}
	code, body := httpDo(t, "GET", ta.adminURL("/"), "", "")
	if code != 200 || !strings.Contains(body, "<title>strata admin</title>") {
		t.Fatalf("page: %d", code)
	}
	if code, _ := httpDo(t, "GET", ta.adminURL("/admin/v1/nope"), "", ""); code != 404 {
		t.Fatalf("unknown path: %d", code)
	}
	_, body = httpDo(t, "GET", ta.adminURL("/admin/v1/tiers"), "", "")
	if !strings.Contains(body, `"kind": "none"`) {
		t.Fatalf("single tier not shown: %s", body)
	}
}

func TestStopIsBoundedAndIdempotent(t *testing.T) {
	ta := startApp(t, "")
	tc := mctext.Dial(t, ta.proxy.Addr())
	tc.Set("a", "b", 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ta.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ta.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func rewrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustFlags(t *testing.T, args ...string) *config.Flags {
	t.Helper()
	f, err := config.ParseFlags(args, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestReloadRotatesToken(t *testing.T) {
	tok := writeFile(t, "token", "first")
	ta := startApp(t, fmt.Sprintf("[admin]\ntoken_file = %q\n", tok))
	if code, _ := httpDo(t, "GET", ta.adminURL("/admin/v1/promotion"), "first", ""); code != 200 {
		t.Fatalf("first token: %d", code)
	}
	rewrite(t, tok, "second\n")
	ta.reloadFile(ta.flags)
	if code, _ := httpDo(t, "GET", ta.adminURL("/admin/v1/promotion"), "first", ""); code != 401 {
		t.Fatalf("old token after rotation: %d", code)
	}
	if code, _ := httpDo(t, "GET", ta.adminURL("/admin/v1/promotion"), "second", ""); code != 200 {
		t.Fatalf("new token after rotation: %d", code)
	}
	// An emptied token file is an error: the reload is rejected and the
	// token in force stays.
	rewrite(t, tok, "\n")
	ta.reloadFile(ta.flags)
	if code, _ := httpDo(t, "GET", ta.adminURL("/admin/v1/promotion"), "second", ""); code != 200 {
		t.Fatalf("token after a rejected reload: %d", code)
	}
	if !strings.Contains(ta.log.String(), "key=admin.token_file") {
		t.Fatalf("rejection not logged:\n%s", ta.log.String())
	}
}

func TestJSONLogs(t *testing.T) {
	var buf bytes.Buffer
	log, level := newLogger("json", slog.LevelWarn, &buf)
	log.Info("hidden")
	log.Warn("shown", "k", 1)
	level.Set(slog.LevelInfo)
	log.Info("now shown")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines: %q", lines)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil || m["msg"] != "shown" || m["k"] != float64(1) {
		t.Fatalf("not a JSON log line: %q %v", lines[0], err)
	}
}
