package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/browsertest"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
)

// adminRequests records the admin API requests a tab sends (method, path,
// the Authorization header) and the statuses they got, from the browser's
// own network events: what really went over the wire, not what the
// script meant to send.
type adminRequests struct {
	admin string // http://host:port of the admin server

	mu   sync.Mutex // guards the fields below
	byID map[network.RequestID]int
	sent []sentRequest
}

type sentRequest struct {
	method, path, auth string
	status             int64 // 0 until the reply came
}

func recordAdminRequests(b *browsertest.Browser, admin string) *adminRequests {
	r := &adminRequests{admin: admin, byID: map[network.RequestID]int{}}
	b.Listen(func(ev any) {
		r.mu.Lock()
		defer r.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if !strings.HasPrefix(e.Request.URL, r.admin+"/admin/v1/") {
				return
			}
			auth, _ := e.Request.Headers["Authorization"].(string)
			r.byID[e.RequestID] = len(r.sent)
			r.sent = append(r.sent, sentRequest{method: e.Request.Method, path: strings.TrimPrefix(e.Request.URL, r.admin), auth: auth})
		case *network.EventResponseReceived:
			if i, ok := r.byID[e.RequestID]; ok {
				r.sent[i].status = e.Response.Status
			}
		}
	})
	return r
}

// matching returns the requests sent with method to path.
func (r *adminRequests) matching(method, path string) []sentRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sentRequest
	for _, s := range r.sent {
		if s.method == method && s.path == path {
			out = append(out, s)
		}
	}
	return out
}

// startManagedPageApp serves a managed L2 pool of three real memcached
// servers with the in-memory control plane, an admin token, and traffic
// through it, so the shard map has loads to show.
func startManagedPageApp(t *testing.T, token string) (*testApp, []string) {
	t.Helper()
	var addrs []string
	for range 3 {
		addrs = append(addrs, memcachedtest.Start(t, "-m", "16").Addr)
	}
	tok := writeFile(t, "token", token+"\n")
	// Agents report loads every 500ms; a drain's batch settles after a 2s
	// grace; no periodic rebalance moves shards behind the test's back.
	ta := startApp(t, fmt.Sprintf(`[l1]
kind = "embedded"
memory = "16MiB"
[l2]
managed = true
shards = 64
timeout = "5s"
servers = %s
[control]
report_interval = "500ms"
grace = "2s"
rebalance_interval = "1h"
[admin]
token_file = %q
[sampler]
rate = 1
`, tomlList(addrs), tok))
	return ta, addrs
}

// The operator drains a server by clicking in the page: the server turns
// draining and loses its shards, in the API and in the page; undrain
// brings it back. The calls carry the token, and a page of another origin
// cannot drain even when no token protects the API.
func TestPageDrainsAndUndrainsAServer(t *testing.T) {
	const token = "s3cret"
	ta, addrs := startManagedPageApp(t, token)
	ctl := admin.NewClient(ta.admin.Addr(), token, 5*time.Second)
	shardmap := func() admin.ShardMap {
		t.Helper()
		m, err := ctl.ShardMap(context.Background(), "l2")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	server := func(m admin.ShardMap, addr string) admin.ShardServer {
		t.Helper()
		for _, s := range m.Servers {
			if s.Addr == addr {
				return s
			}
		}
		t.Fatalf("%s is not in the map %+v", addr, m)
		return admin.ShardServer{}
	}
	poll.Until(t, 30*time.Second, "a first published map", func() bool { return shardmap().Version >= 1 })
	// The tiers say which map the page may ask for: L2's, not L1's.
	tiers, err := ctl.Tiers(context.Background())
	if err != nil || len(tiers) != 2 || tiers[0].Managed || !tiers[1].Managed {
		t.Fatalf("tiers: %+v %v, want l2 managed and l1 not", tiers, err)
	}
	startPageLoad(t, ta.proxy.Addr())
	poll.Until(t, 30*time.Second, "every server reports load", func() bool {
		for _, s := range shardmap().Servers {
			if s.Load <= 0 || s.Shards == 0 {
				return false
			}
		}
		return true
	})

	b := browsertest.Start(t)
	ctx, cancel := context.WithTimeout(b.Ctx, 3*time.Minute)
	defer cancel()
	adminBase := "http://" + ta.admin.Addr()
	reqs := recordAdminRequests(b, adminBase)
	if err := chromedp.Run(ctx, network.Enable(), chromedp.Navigate(adminBase+"/")); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, 20*time.Second, "the page asks for the token", `document.querySelector("#ftoken").classList.contains("need")`)
	if err := chromedp.Run(ctx,
		chromedp.SetValue("#token", token, chromedp.ByID),
		chromedp.Click("#use-token", chromedp.ByID),
	); err != nil {
		t.Fatal(err)
	}

	// The map: three servers up, each with shards and a load bar.
	row := func(addr string) string { return `document.querySelector('#shards tr[data-addr="` + addr + `"]')` }
	waitPage(t, ctx, 30*time.Second, "the page lists the three servers with load bars",
		`(() => { const rows = [...document.querySelectorAll("#shards tr[data-addr]")];
		  return rows.length === 3 && rows.every((r) => r.querySelector(".state").textContent === "up" &&
		    Number(r.querySelector(".shards").textContent) > 0 && r.querySelector(".bar").getBoundingClientRect().width > 0); })()`)
	dwell(t, ctx, 20)
	shot(t, ctx, "page-shards-before", "#s-shards")

	victim := addrs[1]
	before := server(shardmap(), victim)
	click := func(act string) {
		t.Helper()
		sel := `#shards button[data-act="` + act + `"][data-addr="` + victim + `"]`
		// The rows are rebuilt when a server's shards or state change (the
		// leader may still be evening out the map): a button found just
		// before a rebuild is gone when the click reaches it. Click again
		// on the new one, as an operator would.
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			if err = chromedp.Run(ctx, chromedp.Click(sel, chromedp.ByQuery)); err == nil || !strings.Contains(err.Error(), "Could not find node") {
				break
			}
		}
		if err != nil {
			t.Fatalf("click %s: %v", act, err)
		}
	}
	// While only loads change, the rows are not rebuilt: the button under
	// the operator's pointer stays the same element, so a click whose press
	// and release straddle a refresh still lands.
	drainSel := `document.querySelector('#shards button[data-act="drain"][data-addr="` + victim + `"]')`
	var kept string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.keptButton = `+drainSel+`; window.keptLoad = `+row(victim)+`.querySelector(".lv").textContent`, &kept)); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, 20*time.Second, "the load shown changes", row(victim)+`.querySelector(".lv").textContent !== window.keptLoad`)
	var same bool
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.keptButton === `+drainSel, &same)); err != nil || !same {
		t.Fatalf("a refresh that changed only loads replaced the drain button (%v)", err)
	}
	click("drain")
	waitPage(t, ctx, 10*time.Second, "the page asks to confirm the drain",
		`document.querySelector('#shards button[data-act="drain"][data-addr="`+victim+`"]').classList.contains("confirm")`)
	shot(t, ctx, "page-shards-confirm", "#s-shards")
	click("drain")
	poll.Until(t, 30*time.Second, "the API shows the server draining and empty", func() bool {
		m := shardmap()
		s := server(m, victim)
		return s.State == "draining" && s.Shards == 0 && m.MovesInFlight == 0
	})
	waitPage(t, ctx, 20*time.Second, "the page shows the server draining and empty",
		row(victim)+`.querySelector(".state").textContent === "draining" && `+row(victim)+`.querySelector(".shards").textContent === "0" && `+
			row(victim)+`.querySelector('button[data-act="undrain"]') !== null`)
	m := shardmap()
	moved := 0
	for _, s := range m.Servers {
		if s.Addr != victim {
			moved += s.Shards
		}
	}
	if moved != 64 {
		t.Fatalf("after the drain the other servers own %d of 64 shards: %+v", moved, m)
	}
	t.Logf("drain: %s owned %d shards, now 0; map v%d", victim, before.Shards, m.Version)
	shot(t, ctx, "page-shards-drained", "#s-shards")
	shot(t, ctx, "page-managed", "")

	click("undrain")
	poll.Until(t, 30*time.Second, "the API shows the server up with shards again", func() bool {
		m := shardmap()
		s := server(m, victim)
		return s.State == "up" && s.Shards > 0 && m.MovesInFlight == 0
	})
	waitPage(t, ctx, 20*time.Second, "the page shows the server up with shards again",
		row(victim)+`.querySelector(".state").textContent === "up" && Number(`+row(victim)+`.querySelector(".shards").textContent) > 0`)

	// Every call the clicks made carried the token and was accepted.
	for _, p := range []string{"/admin/v1/servers/drain", "/admin/v1/servers/undrain"} {
		got := reqs.matching("POST", p)
		if len(got) != 1 || got[0].auth != "Bearer "+token || got[0].status != http.StatusOK {
			t.Errorf("POST %s from the page: %+v, want one request with the token, answered 200", p, got)
		}
	}
	if got := reqs.matching("GET", "/admin/v1/shardmap?tier=l2"); len(got) == 0 || got[len(got)-1].auth != "Bearer "+token {
		t.Errorf("the page reads the shard map without the token: %+v", got)
	}
	for _, e := range b.Errors() {
		// The first reads, before the token was typed, were refused: an
		// expected answer the browser logs as a failed request.
		if !strings.Contains(e, "401") {
			t.Errorf("page error: %s", e)
		}
	}

	// Another origin, with no token in the way: the origin check alone
	// must refuse the drain.
	if err := ta.admin.SetToken(""); err != nil {
		t.Fatal(err)
	}
	statuses := crossOriginPost(t, adminBase, "/admin/v1/servers/drain", fmt.Sprintf(`{"tier": "l2", "addr": %q}`, victim))
	if len(statuses) != 1 || statuses[0] != http.StatusForbidden {
		t.Errorf("drain from another origin: statuses %v, want [403]", statuses)
	}
	// Refused before it reached the shard control: the only drain the
	// admin server recorded is the page's own.
	if n := strings.Count(ta.log.String(), "admin drain"); n != 1 {
		t.Fatalf("the admin server recorded %d drains, want the page's one:\n%s", n, ta.log.String())
	}
	if s := server(shardmap(), victim); s.State != "up" {
		t.Fatalf("a page of another origin drained %s: %+v", victim, s)
	}
}

// crossOriginPost opens a page of another origin (another loopback port)
// in a fresh browser whose script POSTs body to path on the admin server,
// the way a hostile page the operator visits could, and returns the
// statuses the admin server answered.
func crossOriginPost(t *testing.T, adminBase, path, body string) []int64 {
	t.Helper()
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		// mode no-cors with a text/plain body: a "simple" request, which
		// the browser sends without asking the server first.
		fmt.Fprintf(w, `<!doctype html><title>other</title><script>
window.done = fetch(%q, {method: "POST", mode: "no-cors", body: %q}).then(() => "sent", () => "failed");
</script>`, adminBase+path, body)
	}))
	defer evil.Close()
	b := browsertest.Start(t)
	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	reqs := recordAdminRequests(b, adminBase)
	var res string
	if err := chromedp.Run(ctx, network.Enable(), chromedp.Navigate(evil.URL), chromedp.Evaluate(`window.done`, &res, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })); err != nil {
		t.Fatal(err)
	}
	var out []int64
	poll.Until(t, 10*time.Second, "the admin server's answer reaches the browser", func() bool {
		out = out[:0]
		for _, s := range reqs.matching("POST", path) {
			if s.status == 0 {
				return false
			}
			out = append(out, s.status)
		}
		return len(out) > 0
	})
	return out
}
