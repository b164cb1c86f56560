package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/strata-cache/strata/internal/browsertest"
	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
)

// pageLoad is the traffic the page tests watch: one connection reading a
// hot key most of the time and a long tail of others, writing now and then,
// paced by a ticker so it shares the machine. It runs until stop and is
// waited for by the test's cleanup.
type pageLoad struct {
	stop chan struct{}
	wg   sync.WaitGroup
}

const hotKey = "user:hot"

func startPageLoad(t *testing.T, addr string) *pageLoad {
	t.Helper()
	tc := mctext.Dial(t, addr)
	for i := range 200 {
		tc.Set(fmt.Sprintf("user:%d", i), strings.Repeat("v", 20+i%50), 0)
	}
	tc.Set(hotKey, "the hot value", 0)
	l := &pageLoad{stop: make(chan struct{})}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Errorf("load: %v", err)
			return
		}
		defer c.Close()
		rd := bufio.NewReader(c)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
			// One batch: the hot key four times, four tail keys (a few of
			// them never set: misses), one write.
			var b strings.Builder
			for i := range 4 {
				b.WriteString("get " + hotKey + "\r\n")
				fmt.Fprintf(&b, "get user:%d\r\n", (n*7+i*13)%230)
			}
			fmt.Fprintf(&b, "set user:%d 0 0 3\r\nabc\r\n", n%200)
			_ = c.SetDeadline(time.Now().Add(30 * time.Second)) // generous: the machine is shared
			if _, err := c.Write([]byte(b.String())); err != nil {
				t.Errorf("load write: %v", err)
				return
			}
			for got := 0; got < 9; got++ {
				if err := readLoadReply(rd); err != nil {
					t.Errorf("load read after %d of 9 replies of batch %d: %v", got, n, err)
					return
				}
			}
		}
	}()
	t.Cleanup(l.Stop)
	return l
}

// readLoadReply reads one reply to a get or a set of the load: a get's
// VALUE blocks through END, or a single line (STORED, or the SERVER_ERROR
// a request whose backend timed out gets). Every request gets exactly one
// reply, failed or not: a reader that counted only END and STORED would
// wait forever after a SERVER_ERROR, with strata idle and nothing lost.
func readLoadReply(rd *bufio.Reader) error {
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return err
		}
		if f := strings.Fields(line); len(f) == 4 && f[0] == "VALUE" {
			n, err := strconv.Atoi(f[3])
			if err != nil {
				return fmt.Errorf("bad VALUE line %q", line)
			}
			if _, err := rd.Discard(n + 2); err != nil {
				return err
			}
			continue
		}
		switch {
		case line == "END\r\n", line == "STORED\r\n", strings.HasPrefix(line, "SERVER_ERROR "):
			return nil
		}
		return fmt.Errorf("unexpected reply %q", line)
	}
}

func (l *pageLoad) Stop() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// startPageApp serves an embedded L1 over a real memcached L2, sampling
// every key, with a threshold so high that nothing is promoted until the
// page lowers it. The L2 reply timeout is 5 s rather than 250 ms: under
// -race on a loaded machine a reply can come late, and the request then
// fails with SERVER_ERROR, as it should; the load reads that as a reply
// (readLoadReply), but the probes below need L2 to answer.
func startPageApp(t *testing.T) (*testApp, *memcachedtest.Server) {
	m := memcachedtest.Start(t, "-m", "64")
	ta := startApp(t, fmt.Sprintf("[l1]\nkind = \"embedded\"\nmemory = \"16MiB\"\n[l2]\nservers = [%q]\ntimeout = \"5s\"\n[promotion]\nthreshold = 2147483648\n[sampler]\nrate = 1\nwindow = \"10m\"\n", m.Addr))
	return ta, m
}

// evalInt runs a JavaScript expression in the page and returns its number.
func evalInt(ctx context.Context, expr string) (int, error) {
	var n int
	err := chromedp.Run(ctx, chromedp.Evaluate(expr, &n))
	return n, err
}

// waitPage polls a JavaScript condition in the page until it is true.
func waitPage(t *testing.T, ctx context.Context, within time.Duration, what, cond string) {
	t.Helper()
	poll.Until(t, within, what, func() bool {
		var ok bool
		return chromedp.Run(ctx, chromedp.Evaluate(cond, &ok)) == nil && ok
	})
}

// chartsDrawn counts the charts of the page that are shown and hold no
// data point, as a JavaScript expression.
const chartsEmpty = `[...document.querySelectorAll("svg.chart")].filter((s) => !s.closest("[hidden]") && !(Number(s.dataset.points) > 0)).map((s) => s.id).join(",")`

func TestPageShowsLiveTrafficAndTunesN(t *testing.T) {
	ta, m := startPageApp(t)
	startPageLoad(t, ta.proxy.Addr())
	b := browsertest.Start(t)
	ctx, cancel := context.WithTimeout(b.Ctx, 3*time.Minute)
	defer cancel()
	page := "http://" + ta.admin.Addr() + "/"
	// The series' first point closes the first interval after start: wait
	// for it, so that "the page shows what came before it opened" has
	// something to show.
	poll.Until(t, 10*time.Second, "a first history point", func() bool {
		code, body := httpDo(t, "GET", ta.adminURL("/admin/v1/history"), "", "")
		return code == 200 && strings.Contains(body, `"t":`)
	})
	opened := time.Now().UnixMilli()
	if err := chromedp.Run(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}

	// Every chart draws points, and the hot-key table names the hot key.
	var empty, logged string
	poll.Until(t, 60*time.Second, "every chart has data points", func() bool {
		if chromedp.Run(ctx, chromedp.Evaluate(chartsEmpty, &empty)) != nil || empty != "" {
			if empty != logged {
				t.Logf("charts without points yet: %s", empty)
				logged = empty
			}
			return false
		}
		return true
	})
	waitPage(t, ctx, 60*time.Second, "the hot-key table lists "+hotKey,
		`[...document.querySelectorAll("#hotkeys td.hk")].some((td) => td.textContent === "`+hotKey+`")`)
	var first string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#hotkeys td.hk").textContent`, &first)); err != nil || first != hotKey {
		t.Fatalf("the busiest key shown is %q (%v), want %s", first, err, hotKey)
	}
	// The shard map and locality sections say they are not configured.
	waitPage(t, ctx, 10*time.Second, "shard maps: not configured", `document.querySelector("#shards").textContent.includes("not configured")`)
	waitPage(t, ctx, 10*time.Second, "locality: not configured", `document.querySelector("#locality").textContent.includes("not configured")`)
	// History started with the process, before the page opened.
	first0, err := evalInt(ctx, `points[0].t`)
	if err != nil || int64(first0) >= opened {
		t.Fatalf("the page's first point is at %d, the page opened at %d (%v): history must start with the process", first0, opened, err)
	}
	dwell(t, ctx, 40)
	shot(t, ctx, "page-before", "")

	// Before: with N = 2^31 a read through strata leaves nothing in L1, so
	// deleting the key at the memcached server makes the next read miss.
	probe := func(key string) bool {
		tc := mctext.Dial(t, ta.proxy.Addr())
		tc.Set(key, "probe", 0)
		if _, ok := tc.Get(key); !ok {
			t.Fatalf("get %s missed right after the set", key)
		}
		rawDelete(t, m.Addr, key)
		_, inL1 := tc.Get(key)
		return inL1
	}
	if probe("probe:before") {
		t.Fatal("promoted with N = 2^31")
	}
	// Change N in the page, as an operator would.
	if err := chromedp.Run(ctx,
		chromedp.SetValue("#threshold", "1", chromedp.ByID),
		chromedp.Click("#apply-n", chromedp.ByID),
	); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, 10*time.Second, "the page confirms", `document.querySelector("#msg").textContent === "promotion updated"`)
	code, body := httpDo(t, "GET", ta.adminURL("/admin/v1/promotion"), "", "")
	var p struct{ Threshold uint32 }
	if code != 200 || json.Unmarshal([]byte(body), &p) != nil || p.Threshold != 1 {
		t.Fatalf("GET promotion after the page set N=1: %d %s", code, body)
	}
	if got := ta.layered.Policy().Threshold(); got != 1 {
		t.Fatalf("the proxy promotes with N = %d", got)
	}
	// After: N = 1 promotes every L2 hit, so the copy in L1 answers.
	if !probe("probe:after") {
		t.Fatal("not promoted with N = 1")
	}
	// And the page sees promotions happen.
	waitPage(t, ctx, 30*time.Second, "promotions/s above zero", `points.slice(-5).some((p) => p.promotions > 0)`)
	waitPage(t, ctx, 30*time.Second, "the L1 hit ratio rises", `points.slice(-3).some((p) => p.hit_l1 > 0.3)`)
	dwell(t, ctx, 30)
	shot(t, ctx, "page-after", "")
	shot(t, ctx, "page-tiers", "#s-tiers")
	shot(t, ctx, "page-sampler", "#s-sampler")
	shot(t, ctx, "page-hotkeys", "#s-hotkeys")
	if errs := b.Errors(); len(errs) > 0 {
		t.Fatalf("the page logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

func TestPageOfAnotherOriginCannotChangeSettings(t *testing.T) {
	ta, _ := startPageApp(t)
	admin := "http://" + ta.admin.Addr()
	// The other origin: a page on another loopback port that tries to set
	// N and the sample rate on strata's admin API.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>other</title><script>
const a = %q;
window.done = Promise.allSettled([
  fetch(a + "/admin/v1/promotion", {method: "PUT", headers: {"Content-Type": "application/json"}, body: '{"threshold": 1}'}),
  fetch(a + "/admin/v1/sampler", {method: "POST", mode: "no-cors", body: '{"rate": 0}'}),
  fetch(a + "/admin/v1/promotion", {method: "POST", mode: "no-cors", body: '{"threshold": 1}'}),
]).then(() => "settled");
</script>`, admin)
	}))
	defer evil.Close()

	b := browsertest.Start(t)
	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	var mu sync.Mutex
	statuses := map[string][]int64{} // method path → statuses the admin server answered
	reqs := map[network.RequestID]string{}
	b.Listen(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			if strings.HasPrefix(e.Request.URL, admin) {
				reqs[e.RequestID] = e.Request.Method + " " + strings.TrimPrefix(e.Request.URL, admin)
			}
		case *network.EventResponseReceived:
			if k, ok := reqs[e.RequestID]; ok {
				statuses[k] = append(statuses[k], e.Response.Status)
			}
		}
	})
	var res string
	if err := chromedp.Run(ctx, network.Enable(), chromedp.Navigate(evil.URL), chromedp.Evaluate(`window.done`, &res, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })); err != nil {
		t.Fatal(err)
	}
	if got := ta.layered.Policy().Threshold(); got != 2147483648 {
		t.Fatalf("another origin changed N to %d", got)
	}
	if got := ta.sampler.Rate(); got != 1 {
		t.Fatalf("another origin changed the sample rate to %d", got)
	}
	// The requests the browser let through reached the server and were
	// refused there with 403, not merely by the browser's CORS rules.
	mu.Lock()
	defer mu.Unlock()
	for _, k := range []string{"POST /admin/v1/sampler", "POST /admin/v1/promotion"} {
		if s := statuses[k]; len(s) != 1 || s[0] != http.StatusForbidden {
			t.Errorf("%s from another origin: statuses %v, want [403] (all: %v)", k, s, statuses)
		}
	}
	// The same request from the page's own origin goes through.
	req, _ := http.NewRequest("PUT", admin+"/admin/v1/sampler", strings.NewReader(`{"rate": 5}`))
	req.Header.Set("Origin", admin)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("same-origin PUT: %v %v", err, resp)
	}
	resp.Body.Close()
}

// shot saves a screenshot of the page (sel "") or of one element when
// STRATA_PAGE_SHOTS names a directory: how the page was looked at while it
// was built, and how the pictures in docs/img are made.
func shot(t *testing.T, ctx context.Context, name, sel string) {
	dir := os.Getenv("STRATA_PAGE_SHOTS")
	if dir == "" {
		return
	}
	var png []byte
	act := chromedp.FullScreenshot(&png, 100)
	if sel != "" {
		act = chromedp.Screenshot(sel, &png, chromedp.ByQuery)
	}
	if err := chromedp.Run(ctx, act); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dwell lets n more seconds of history accumulate before a screenshot, so
// the pictures show a minute rather than a few seconds. Without
// STRATA_PAGE_SHOTS it does nothing: CI does not wait for pictures.
func dwell(t *testing.T, ctx context.Context, n int) {
	if os.Getenv("STRATA_PAGE_SHOTS") == "" {
		return
	}
	have, err := evalInt(ctx, `points.length`)
	if err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, time.Duration(3*n)*time.Second, "history for the screenshot", fmt.Sprintf(`points.length >= %d`, have+n))
}

// rawDelete deletes key directly at a memcached server, bypassing strata.
func rawDelete(t *testing.T, addr, key string) {
	t.Helper()
	c := mctext.Dial(t, addr)
	defer c.Close()
	if r := c.Delete(key); r != "DELETED" {
		t.Fatalf("delete %s at memcached: %q", key, r)
	}
}

// With a token configured the page asks for it, keeps it for the tab, and
// then reads and tunes like without one.
func TestPageAsksForTheToken(t *testing.T) {
	tok := writeFile(t, "token", "s3cret\n")
	ta := startApp(t, fmt.Sprintf("[admin]\ntoken_file = %q\n[sampler]\nrate = 1\n", tok))
	b := browsertest.Start(t)
	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Navigate("http://"+ta.admin.Addr()+"/")); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, 20*time.Second, "the page asks for the token",
		`document.querySelector("#msg").textContent.includes("needs a token") && document.querySelector("#ftoken").classList.contains("need")`)
	if err := chromedp.Run(ctx,
		chromedp.SetValue("#token", "s3cret", chromedp.ByID),
		chromedp.Click("#use-token", chromedp.ByID),
	); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, 20*time.Second, "the page reads with the token", `document.querySelector("#threshold").value === "32" && !document.querySelector("#ftoken").classList.contains("need")`)
	// A typed value outlives the polls until it is applied, focused or
	// not: the press on "apply" takes the focus off the input before the
	// release submits it.
	var polled string
	if err := chromedp.Run(ctx,
		chromedp.SetValue("#rate", "7", chromedp.ByID),
		chromedp.Evaluate(`document.activeElement.blur(); document.querySelector("#live").textContent`, &polled),
	); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, 20*time.Second, "two polls after the value was typed", `document.querySelector("#live").textContent !== `+strconv.Quote(polled))
	if err := chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector("#live").textContent`, &polled)); err != nil {
		t.Fatal(err)
	}
	waitPage(t, ctx, 20*time.Second, "a second poll", `document.querySelector("#live").textContent !== `+strconv.Quote(polled))
	var typed string
	if err := chromedp.Run(ctx, chromedp.Value("#rate", &typed, chromedp.ByID)); err != nil || typed != "7" {
		t.Fatalf("a poll replaced the typed sample rate: %q (%v)", typed, err)
	}
	if err := chromedp.Run(ctx, chromedp.Click("#apply-rate", chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 20*time.Second, "the sample rate set through the page", func() bool { return ta.sampler.Rate() == 7 })
	// A per-prefix rule added in the page reaches the proxy's policy.
	if err := chromedp.Run(ctx,
		chromedp.Click("#addrule", chromedp.ByID),
		chromedp.SetValue("#rules tbody tr:last-child .rp", "photo:", chromedp.ByQuery),
		chromedp.SetValue("#rules tbody tr:last-child .rn", "4", chromedp.ByQuery),
		chromedp.Click("#apply-rules", chromedp.ByID),
	); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 20*time.Second, "the rule set through the page", func() bool {
		r := ta.layered.Policy().Rules()
		return len(r) == 1 && r[0].Prefix == "photo:" && r[0].Threshold == 4
	})
	var kept string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`sessionStorage.getItem("strata-token")`, &kept)); err != nil || kept != "s3cret" {
		t.Fatalf("sessionStorage holds %q (%v)", kept, err)
	}
	// A 401 is an expected answer here, not a page error; the browser logs
	// failed requests as errors, so only script errors are checked.
	for _, e := range b.Errors() {
		if !strings.Contains(e, "401") {
			t.Errorf("page error: %s", e)
		}
	}
}
