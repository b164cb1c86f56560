package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/strata-cache/strata/internal/mctext"
)

// strata ctl top, run under a pseudo-terminal as an operator would run it
// over ssh, shows the hit ratio of the traffic sent and redraws in place.
func TestCtlTopUnderATerminalShowsTheHitRatio(t *testing.T) {
	ta := startApp(t, "")
	tc := mctext.Dial(t, ta.proxy.Addr())
	for _, k := range []string{"a:1", "a:2", "a:3"} {
		tc.Set(k, "value", 0)
	}
	// 9 reads that hit (L1 or L2) and 3 that miss: 75 %.
	for range 3 {
		for _, k := range []string{"a:1", "a:2", "a:3"} {
			if _, ok := tc.Get(k); !ok {
				t.Fatalf("get %s missed", k)
			}
		}
	}
	for _, k := range []string{"b:1", "b:2", "b:3"} {
		if _, ok := tc.Get(k); ok {
			t.Fatalf("get %s hit", k)
		}
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	done := make(chan error, 1)
	go func() {
		// 20 frames 300 ms apart: the series gains a point a second, so
		// the traffic above is in it within a few frames.
		done <- subcommands["ctl"].run([]string{"--admin", ta.admin.Addr(), "top", "--interval", "300ms", "--count", "20"}, tty, io.Discard)
		tty.Close()
	}()
	var out bytes.Buffer
	buf := make([]byte, 4096)
	for {
		n, err := ptmx.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break // EIO once the terminal's last writer closed it
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ctl top: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ctl top did not end after its frames")
	}
	screen := out.String()
	if !strings.Contains(screen, "\x1b[H\x1b[2J") {
		t.Fatalf("no screen redraw: the output was not seen as a terminal:\n%q", screen)
	}
	frames := strings.Split(screen, "\x1b[H\x1b[2J")
	last := frames[len(frames)-1]
	var row string
	for _, l := range strings.Split(last, "\r\n") {
		if strings.HasPrefix(l, "hit ratio") {
			row = l
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(row), "75.0 %") {
		t.Fatalf("hit ratio row %q, want 75.0 %% since start; last frame:\n%s", row, last)
	}
}
