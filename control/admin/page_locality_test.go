package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strata-cache/strata/control/admin/history"
	"github.com/strata-cache/strata/internal/browsertest"
)

// pageText waits, polling inside the page, until a JavaScript expression
// reads want, and fails with what it read last.
func pageText(t *testing.T, ctx context.Context, what, expr, want string) {
	t.Helper()
	w, _ := json.Marshal(want)
	read := `(() => { try { return String(` + expr + `); } catch (e) { return "error: " + e; } })()`
	err := chromedp.Run(ctx, chromedp.Poll(read+` === `+string(w), nil, chromedp.WithPollingTimeout(30*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		var got string
		_ = chromedp.Run(ctx, chromedp.Evaluate(read, &got))
		t.Fatalf("%s: %q (%v), want %q", what, got, err, want)
	}
}

// lookupShot saves a screenshot of the locality section when
// STRATA_PAGE_SHOTS names a directory, as cmd/strata's page tests do.
func lookupShot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("STRATA_PAGE_SHOTS")
	if dir == "" {
		return
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.Screenshot("#s-locality", &png, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The page's locality section over a LocalityControl and RegionView: the
// figures come from two minutes of history written with exact counts, the
// regions from the view, and the lookup box shows a μ-shard, a name with
// a slash in it, and a clear message for a name without a row.
func TestPageLocalitySection(t *testing.T) {
	loc := newLocTable()
	s := startLocalityServer(t, newState(), loc)
	// Two minutes of history: 100 routed requests a second, none remote
	// in the first minute and a quarter in the second; 2 migrations
	// finish in the first minute and 3 in the second; one is in flight at
	// the end. The recorder's own goroutine is stopped, and the points are
	// written an hour ahead so that none of its own can come between.
	s.hist.Stop()
	base := time.Now().Add(time.Hour)
	var c history.Counters
	s.hist.Add(base, c)
	for i := 1; i <= 120; i++ {
		c.LocalityRequests += 100
		if i > 60 {
			c.LocalityRemote += 25
		}
		if i == 10 || i == 40 || i == 70 || i == 90 || i == 110 {
			c.Migrations++
		}
		c.MigrationsInFlight = 0
		if i == 120 {
			c.MigrationsInFlight = 1
		}
		s.hist.Add(base.Add(time.Duration(i)*time.Second), c)
	}

	b := browsertest.Start(t)
	ctx, cancel := context.WithTimeout(b.Ctx, 2*time.Minute)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Navigate("http://"+s.Addr()+"/")); err != nil {
		t.Fatal(err)
	}
	cardValue := func(label string) string {
		return `[...document.querySelectorAll("#locality .card")].find((c) => c.querySelector("span").textContent === "` + label + `").querySelector("b").textContent`
	}
	pageText(t, ctx, "remote fraction of the last minute", cardValue("remote, last minute"), "25.0 %")
	pageText(t, ctx, "remote fraction since start", cardValue("remote since start"), "12.5 %")
	pageText(t, ctx, "migrations of the last minute", cardValue("migrations, last minute"), "3")
	pageText(t, ctx, "migrations since start", cardValue("migrations since start"), "5")
	pageText(t, ctx, "migrations in flight", cardValue("in flight"), "1")
	// The per-minute series: at the last point, the 3 of the last minute.
	pageText(t, ctx, "migrations per minute at the end", `perMinute(points, "migrations").at(-1)[1]`, "3")
	for _, ch := range []string{"ch-remote", "ch-migrations"} {
		pageText(t, ctx, ch+" drawn", `Number(document.getElementById("`+ch+`").dataset.points) > 0`, "true")
	}
	// Remote fraction per region, with this strata's region marked.
	pageText(t, ctx, "region a", `[...document.querySelector('#regions tr[data-region="a"]').cells].map((c) => c.textContent.trim()).join(";")`, "a (this strata);1,000;5.0 %;7")
	pageText(t, ctx, "region b", `document.querySelector('#regions tr[data-region="b"] .frac').textContent`, "50.0 %")

	lookup := func(name string) {
		t.Helper()
		if err := chromedp.Run(ctx,
			chromedp.SetValue("#mushard", name, chromedp.ByID),
			chromedp.Click("#lookup-btn", chromedp.ByID),
		); err != nil {
			t.Fatal(err)
		}
	}
	lookup("u: 42")
	pageText(t, ctx, "owner", `document.querySelector("#lookup .ms-owner").textContent`, "b")
	pageText(t, ctx, "epoch", `document.querySelector("#lookup .ms-epoch").textContent`, "3")
	pageText(t, ctx, "state", `document.querySelector("#lookup .ms-state").textContent`, "migrating from a")
	pageText(t, ctx, "counters", `[...document.querySelectorAll("#lookup .ms-counters tr[data-region]")].map((r) => [...r.cells].map((c) => c.textContent.trim()).join(";")).join(" | ")`,
		"a;12.5;12.5 % | b (owner);87.5;87.5 %")
	// History, newest first.
	pageText(t, ctx, "history", `[...document.querySelectorAll("#lookup .ms-history tr")].slice(1).map((r) => r.cells[0].textContent + " " + r.cells[2].textContent + " " + r.cells[3].textContent).join(" | ")`,
		"3 c → b remote share | 2 a → c manual | 1 created in a created")
	lookupShot(t, ctx, "page-locality")
	// The μ-shard shown follows the table: its migration settles.
	loc.mu.Lock()
	m := loc.rows["u: 42"]
	m.State, m.Source = "stable", ""
	loc.rows["u: 42"] = m
	loc.mu.Unlock()
	pageText(t, ctx, "the settled state", `document.querySelector("#lookup .ms-state").textContent`, "stable")
	// A pin set through the API shows at the next refresh.
	pageText(t, ctx, "no pin", `document.querySelector("#lookup .ms-pin").textContent`, "–")
	if _, err := loc.Pin(ctx, "u: 42", "b"); err != nil {
		t.Fatal(err)
	}
	pageText(t, ctx, "the pin", `document.querySelector("#lookup .ms-pin").textContent`, "b")

	lookup("p/x 7%")
	pageText(t, ctx, "a name with a slash", `document.querySelector("#lookup .ms-id").textContent + " " + document.querySelector("#lookup .ms-state").textContent`, "p/x 7% stable")
	if !loc.askedFor("p/x 7%") {
		t.Fatal("the view was not asked for the name the operator typed")
	}

	lookup("u: 999")
	pageText(t, ctx, "an unknown μ-shard", `document.querySelector("#lookup .lookup-err").textContent.startsWith('no μ-shard named "u: 999"')`, "true")
	lookupShot(t, ctx, "page-locality-unknown")

	for _, e := range b.Errors() {
		// The unknown μ-shard's 404 is the answer the page asked for; the
		// browser logs it as a failed request.
		if !strings.Contains(e, "404") || !strings.Contains(e, "u%3A%20999") {
			t.Errorf("page error: %s", e)
		}
	}
}

// Without a LocalityControl the page says locality routing is not
// configured and offers no lookup box.
func TestPageLocalityOff(t *testing.T) {
	s := startLocalityServer(t, newState(), nil)
	b := browsertest.Start(t)
	ctx, cancel := context.WithTimeout(b.Ctx, time.Minute)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Navigate("http://"+s.Addr()+"/")); err != nil {
		t.Fatal(err)
	}
	pageText(t, ctx, "locality off", `document.querySelector("#locality").textContent`, "locality routing: not configured on this strata")
	pageText(t, ctx, "no lookup box", `document.querySelector("#flookup").hidden && document.querySelector("#loc-charts").hidden`, "true")
	if errs := b.Errors(); len(errs) > 0 {
		t.Fatalf("page errors: %v", errs)
	}

	// The endpoints exist but the view says locality routing is off: the
	// page repeats the API's words instead of drawing empty figures.
	loc := newLocTable()
	loc.err = fmt.Errorf("no [locality] section: %w", errors.ErrUnsupported)
	s = startLocalityServer(t, newState(), loc)
	if err := chromedp.Run(ctx, chromedp.Navigate("http://"+s.Addr()+"/")); err != nil {
		t.Fatal(err)
	}
	pageText(t, ctx, "locality off by the API", `document.querySelector("#locality").textContent`,
		"locality routing is off on this strata (no [locality] section: unsupported operation)")
	pageText(t, ctx, "no lookup box", `document.querySelector("#flookup").hidden && document.querySelector("#loc-charts").hidden`, "true")
}
