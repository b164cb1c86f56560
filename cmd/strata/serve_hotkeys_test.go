package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/poll"
)

const hotkeysConfig = `[hotkeys]
rate = 1
[[hotkeys.rule]]
prefix = "votes:"
kind = "counter"
split = 4
[[hotkeys.rule]]
prefix = "celeb:"
kind = "read"
split = 2
adaptive = true
`

// TestHotKeysServe: a counter rule from the file splits increments; the
// hot key shows in stats hotkeys, the admin API, strata ctl hotkeys and
// the metrics; a reload removes the rules live.
func TestHotKeysServe(t *testing.T) {
	ta := startApp(t, hotkeysConfig)
	tc := mctext.Dial(t, ta.proxy.Addr())
	tc.Set("votes:1", "0", 0)
	incr := func() string { return tc.Line("incr votes:1 1\r\n") }
	for i := 1; i <= 20; i++ {
		if got := incr(); got != fmt.Sprint(i) {
			t.Fatalf("incr %d: %q", i, got)
		}
	}
	if got := tc.Do("gets votes:1\r\n", mctext.EndsAtEND); len(got) != 3 || got[0] != "VALUE votes:1 0 2 18446744073709551615" || got[1] != "20" {
		t.Fatalf("gets on a split counter: %q", got)
	}
	// The meta commands: ma answers the total, a quiet ma nothing, mg the
	// sum, a compare-CAS a client error.
	if got := tc.Do("ma votes:1 v\r\n", func(l string) bool { return !strings.HasPrefix(l, "VA") }); len(got) != 2 || got[0] != "VA 2" || got[1] != "21" {
		t.Fatalf("ma v: %q", got)
	}
	if got := tc.Line("ma votes:1 q\r\nmn\r\n"); got != "MN" {
		t.Fatalf("ma q: %q", got)
	}
	if got := tc.Do("mg votes:1 v\r\n", func(l string) bool { return !strings.HasPrefix(l, "VA") }); len(got) != 2 || got[1] != "22" {
		t.Fatalf("mg v: %q", got)
	}
	if got := tc.Line("ma votes:1 C5\r\n"); !strings.HasPrefix(got, "CLIENT_ERROR ") {
		t.Fatalf("ma C: %q", got)
	}
	tc.Line("decr votes:1 2\r\n")
	// The detector publishes once a second of the serving clock: keep the
	// counter busy until the key is listed.
	var body string
	poll.Until(t, 15*time.Second, "votes:1 in /admin/v1/hotkeys", func() bool {
		incr()
		var code int
		code, body = httpDo(t, "GET", ta.adminURL("/admin/v1/hotkeys"), "", "")
		return code == 200 && strings.Contains(body, `"votes:1"`)
	})
	var hk struct {
		Keys []struct {
			Key, Kind string
			K         int
			Split     bool
			Writes    float64 `json:"writes_per_sec"`
		}
		Counters map[string]uint64
	}
	if err := json.Unmarshal([]byte(body), &hk); err != nil {
		t.Fatal(err)
	}
	k := hk.Keys[0]
	if k.Kind != "counter" || k.K != 4 || !k.Split || k.Writes <= 0 || hk.Counters["split_ops"] < 20 {
		t.Fatalf("hot keys: %s", body)
	}
	st := tc.Stats("hotkeys")
	if st["rules"] != "2" || st["split_ops"] == "" || st["split_ops"] == "0" || !strings.HasPrefix(st["hotkey:votes:1"], "counter k=4 split=1") {
		t.Fatalf("stats hotkeys: %v", st)
	}
	for _, name := range []string{"near_hits", "bounded_replies", "bounded_refreshes"} {
		if _, ok := hk.Counters[name]; st[name] != "0" || !ok {
			t.Fatalf("%s: stats %q, admin %v", name, st[name], hk.Counters)
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"ctl", "--admin", ta.admin.Addr(), "hotkeys"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), `"votes:1"`) {
		t.Fatalf("ctl hotkeys: %d %q %q", code, out.String(), errOut.String())
	}
	if v := metricValue(scrape(t, ta), "strata_hotkeys_events_total", map[string]string{"event": "split_ops"}); v < 20 {
		t.Fatalf("strata_hotkeys_events_total{event=split_ops} = %v", v)
	}

	// Reload: the counter rule goes adaptive (its reads still add up the
	// parts), the detector's rate needs a restart.
	rewrite(t, ta.path, strings.Replace(strings.Replace(hotkeysConfig, "split = 4", "split = 4\nadaptive = true", 1), "rate = 1", "rate = 5", 1))
	next, err := config.Load(ta.flags.Path, ta.flags)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ta.Reload(next)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Applied, "hotkeys.rule") || len(rep.Kept) == 0 {
		t.Fatalf("reload: %+v", rep)
	}
	if rules := ta.hotkeys.Rules(); len(rules) != 2 || !rules[0].Adaptive || !rules[1].Adaptive {
		t.Fatalf("rules after reload: %+v", rules)
	}
	before := ta.hotkeys.Stats().SplitOps
	if v, ok := tc.Get("votes:1"); !ok || len(v) < 2 || v != tc.Line("incr votes:1 0\r\n") {
		t.Fatalf("get after reload: %q", v)
	}
	if ta.hotkeys.Stats().SplitOps == before {
		t.Fatal("the read after reload did not aggregate the parts")
	}
}

func TestHotKeysConfigErrors(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"[[hotkeys.rule]]\nprefix = \"a\"\nkind = \"gauge\"\nsplit = 2\n", "hotkeys.rule[0].kind"},
		{"[[hotkeys.rule]]\nprefix = \"a\"\nkind = \"list\"\nsplit = 1\n", "hotkeys.rule[0].split: 1 is out of range"},
		{"[[hotkeys.rule]]\nkind = \"list\"\nsplit = 3\n", "hotkeys.rule[0].prefix"},
		{"[hotkeys]\nhold = \"10ms\"\n", "hotkeys.hold"},
		{"[hotkeys]\nsample = 0\n", "hotkeys.sample"},
		{"[hotkeys]\nnear_bytes = \"10\"\n", "hotkeys.near_bytes"},
		{"[[hotkeys.rule]]\nprefix = \"a\"\nkind = \"counter\"\nsplit = 2\nreply = \"rough\"\n", "hotkeys.rule[0].reply"},
		{"[[hotkeys.rule]]\nprefix = \"a\"\nkind = \"counter\"\nsplit = 2\nreply = \"bounded\"\nstaleness = \"2m\"\n", "hotkeys.rule[0].staleness"},
		{"[[hotkeys.rule]]\nprefix = \"a\"\nkind = \"list\"\nsplit = 2\nnear = \"1s\"\n", "hotkeys.rule[0].near"},
	} {
		path := writeFile(t, "bad.toml", tc.file)
		_, err := config.Load(path, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path+":") {
			t.Errorf("%q: %v, want %s with its line", tc.file, err, tc.want)
		}
	}
}

// TestHotKeyMarksSharedThroughEtcd: with [control] etcd, an adaptive mark
// that one strata's detector sets reaches another strata that never saw
// the key (it serves other keys under the rule: its loops read the marks
// as they work), so both split the same key.
func TestHotKeyMarksSharedThroughEtcd(t *testing.T) {
	e := etcdtest.Start(t)
	conf := fmt.Sprintf("[control]\netcd = [%q]\n[hotkeys]\nrate = 1\nhold = \"30s\"\n[[hotkeys.rule]]\nprefix = \"votes:\"\nkind = \"counter\"\nsplit = 4\nadaptive = true\n", e.Endpoint)
	a, b := startApp(t, conf), startApp(t, conf)
	if a.hotmarks == nil || b.hotmarks == nil {
		t.Fatal("[control] etcd did not give the hot-key tiers a shared mark store")
	}
	tc, other := mctext.Dial(t, a.proxy.Addr()), mctext.Dial(t, b.proxy.Addr())
	tc.Set("votes:9", "0", 0)
	poll.Until(t, 20*time.Second, "votes:9 marked on the strata that never saw it", func() bool {
		tc.Line("incr votes:9 1\r\n")
		other.Get("votes:other")
		return b.hotkeys.Stats().Marked == 1
	})
	if got := b.hotkeys.HotKeys(); len(got) != 1 || got[0].Key != "votes:9" {
		t.Fatalf("hot keys on the idle strata: %+v", got)
	}
}
