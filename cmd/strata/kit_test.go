package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/tlstest"
)

// metricName matches strata's metric names in PromQL (recording rules'
// names, "strata:…", have a colon and do not match).
var metricName = regexp.MustCompile(`\bstrata_[a-z0-9_]+`)

// The Grafana dashboard and the Prometheus rules in deploy/ name only
// metrics that a running strata exports.
func TestDeployKitNamesOnlyExportedMetrics(t *testing.T) {
	m := memcachedtest.Start(t, "-m", "16")
	// With TLS on, so that its metrics are exported; the client uses
	// the plaintext listener beside.
	_, cert, key := tlstest.NewCA(t, "kit").WriteFiles(t, t.TempDir(), "server")
	ta := startApp(t, fmt.Sprintf("[server]\nlisten_plain = \"127.0.0.1:0\"\n[tls]\ncert = %q\nkey = %q\n[l2]\nservers = [%q]\n[sampler]\nrate = 1\n", cert, key, m.Addr))
	tc := mctext.Dial(t, ta.proxy.PlainAddr())
	tc.Set("k:1", "v", 0)
	tc.Get("k:1")
	tc.Get("k:2")
	code, body := httpDo(t, "GET", ta.adminURL("/metrics"), "", "")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	exported := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		exported[name] = true
	}

	used := map[string][]string{} // metric → files using it
	root := filepath.Join("..", "..", "deploy")
	dash, err := os.ReadFile(filepath.Join(root, "grafana", "strata-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && (k == "expr" || k == "query" || k == "definition") {
					exprs = append(exprs, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var d any
	if err := json.Unmarshal(dash, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	walk(d)
	if len(exprs) < 20 {
		t.Fatalf("the dashboard has %d queries; the walk lost them", len(exprs))
	}
	for _, e := range exprs {
		for _, n := range metricName.FindAllString(e, -1) {
			used[n] = append(used[n], "strata-dashboard.json")
		}
	}
	rules, err := os.ReadFile(filepath.Join(root, "prometheus", "strata-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range metricName.FindAllString(string(rules), -1) {
		used[n] = append(used[n], "strata-rules.yml")
	}
	for _, alert := range []string{"StrataL2ServerDown", "StrataHitRatioCollapse", "StrataPromotionFailures", "StrataSamplerDrops", "StrataMigrationsStuck", "StrataRemoteFractionHigh", "StrataTLSCertExpiring"} {
		if !strings.Contains(string(rules), "alert: "+alert+"\n") {
			t.Errorf("the rules lack the alert %s", alert)
		}
	}
	var missing []string
	for n, files := range used {
		if !exported[n] {
			missing = append(missing, n+" (in "+strings.Join(files[:1], ", ")+")")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("metrics used but not exported by strata:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(used) < 15 {
		t.Fatalf("only %d metric names found in the kit", len(used))
	}
}
