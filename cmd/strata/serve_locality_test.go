package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/internal/mctext"
)

// One region alone, in process and under the race detector: [locality]
// without etcd keeps its state in memory and runs its own placement
// service; μ-shard keys are created here, served here and counted; a
// reload that changes the section keeps the running one; the stop ends
// every goroutine the composition started.
func TestLocalityOneRegionInMemory(t *testing.T) {
	const cfg = "[server]\nregion = \"solo\"\n[locality]\nlink_listen = \"127.0.0.1:0\"\n[[locality.rule]]\nprefix = \"u:\"\ntag = true\n"
	ta := startApp(t, cfg)
	if ta.proxy.LinkAddr() == "" || strings.HasSuffix(ta.proxy.LinkAddr(), ":0") {
		t.Fatalf("link listener: %q", ta.proxy.LinkAddr())
	}
	tc := mctext.Dial(t, ta.proxy.Addr())
	if r := tc.Set("u:{7}:name", "ada", 0); r != "STORED" {
		t.Fatalf("set of a new μ-shard: %q", r)
	}
	if v, ok := tc.Get("u:{7}:name"); !ok || v != "ada" {
		t.Fatalf("get: %q %v", v, ok)
	}
	if r := tc.Set("plain", "x", 0); r != "STORED" { // no rule: local, as without [locality]
		t.Fatalf("set of a key with no μ-shard: %q", r)
	}

	code, body := httpDo(t, "GET", ta.adminURL("/admin/v1/locality/mushards/u:%207"), "", "")
	var m muShard
	if code != 200 || json.Unmarshal([]byte(body), &m) != nil || m.Owner != "solo" || m.State != "stable" || m.Epoch != 1 {
		t.Fatalf("the μ-shard's row: %d %s", code, body)
	}
	if code, body := httpDo(t, "POST", ta.adminURL("/admin/v1/locality/mushards/u:%207/migrate"), "", `{"to":"elsewhere"}`); code != 400 {
		t.Fatalf("migrate to an unknown region: %d %s, want 400", code, body)
	}
	fams := scrape(t, ta)
	if n := metricValue(fams, "strata_locality_requests_total", map[string]string{"result": "local"}); n != 2 {
		t.Errorf("local requests: %v, want 2", n)
	}
	if n := metricValue(fams, "strata_locality_location_cache_total", map[string]string{"result": "miss"}); n != 1 {
		t.Errorf("location cache misses: %v, want 1 (the first access)", n)
	}

	rewrite(t, ta.path, strings.Replace(cfg, "[locality]\n", "[locality]\nmigrate_after = \"1m\"\n", 1))
	next, err := config.Load(ta.flags.Path, ta.flags)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ta.Reload(next)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Kept, "locality") || ta.settings().Locality.Policy.MigrateAfter != 10*time.Minute {
		t.Fatalf("reload of [locality]: kept %v, migrate_after in force %v", rep.Kept, ta.settings().Locality.Policy.MigrateAfter)
	}
	if v, ok := tc.Get("u:{7}:name"); !ok || v != "ada" {
		t.Fatalf("get after the reload: %q %v", v, ok)
	}
}
