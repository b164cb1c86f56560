package browsertest

import (
	"github.com/strata-cache/strata/internal/testbin"

	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium with one tab.
type Browser struct {
	Ctx context.Context // the tab: pass it to chromedp.Run

	mu     sync.Mutex // guards errors
	errors []string
}

// Binary returns the chromium binary's path; without one it fails t
// (outside CI, STRATA_SKIP_BROWSER=1 skips instead).
func Binary(t testing.TB) string {
	t.Helper()
	return testbin.Require(t, "chromium", "STRATA_SKIP_BROWSER", "chromium", "chromium-browser")
}

// Start launches headless Chromium with a temporary profile and opens a
// blank tab.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := Binary(t)
	// Not t.TempDir: its removal fails the test when a Chromium helper
	// process still writes into the profile just after the browser exited.
	profile, err := os.MkdirTemp("", "strata-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	b := &Browser{Ctx: ctx}
	chromedp.ListenTarget(ctx, b.listen)
	if err := chromedp.Run(ctx, cdplog.Enable(), runtime.Enable()); err != nil {
		cancelTab()
		cancelAlloc()
		removeProfile(t, profile)
		t.Fatalf("starting chromium: %v", err)
	}
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // waits for the browser process to exit
		removeProfile(t, profile)
	})
	return b
}

// removeProfile deletes Chromium's profile directory, retrying while a
// helper process that outlived the browser for a moment still writes into
// it; past the deadline it logs and leaves the directory.
func removeProfile(t testing.TB, dir string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := os.RemoveAll(dir)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("chromium profile not removed: %v", err)
			return
		}
		time.Sleep(50 * time.Millisecond) // polling the helpers' exit, with a deadline
	}
}

func (b *Browser) listen(ev any) {
	var msg string
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.APITypeError && e.Type != runtime.APITypeAssert {
			return
		}
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
		}
		msg = "console." + string(e.Type) + ": " + strings.Join(parts, " ")
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg = fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber, d.Text)
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
	case *cdplog.EventEntryAdded:
		if e.Entry.Level != cdplog.LevelError {
			return
		}
		msg = fmt.Sprintf("log %s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL)
	default:
		return
	}
	b.mu.Lock()
	b.errors = append(b.errors, msg)
	b.mu.Unlock()
}

// Errors returns the error messages the page produced so far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Listen adds a listener for the tab's events (network responses, say).
func (b *Browser) Listen(fn func(ev any)) { chromedp.ListenTarget(b.Ctx, fn) }
