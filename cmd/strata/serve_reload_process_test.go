package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// promotionThreshold reads the live global N through the admin API.
func promotionThreshold(t *testing.T, admin string) uint32 {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/admin/v1/promotion")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct {
		Threshold uint32 `json:"threshold"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p.Threshold
}

// A SIGHUP that finds the file emptied (an editor or a deploy tool caught
// half way) must leave the running settings alone, as a missing file does,
// instead of resetting them to the defaults.
func TestSIGHUPWithEmptyFileKeepsSettings(t *testing.T) {
	bin := testbin.BuildStrata(t)
	cfg := writeFile(t, "strata.toml", "[promotion]\nthreshold = 8\n")
	p := startProcess(t, bin, cfg)
	if n := promotionThreshold(t, p.admin); n != 8 {
		t.Fatalf("threshold at start: %d", n)
	}
	for i, empty := range []string{"", "\n  \n", "# only a comment\n\n#another\n"} {
		rewrite(t, cfg, empty)
		p.signal(t, syscall.SIGHUP)
		poll.Until(t, 10*time.Second, "the empty-file reload to be rejected", func() bool {
			return strings.Count(p.stderr.String(), "sets no key") == i+1
		})
		if n := promotionThreshold(t, p.admin); n != 8 {
			t.Fatalf("after SIGHUP with file %q the threshold is %d, want 8 kept", empty, n)
		}
	}
	// The same path still reloads a real change.
	rewrite(t, cfg, "[promotion]\nthreshold = 16\n")
	p.signal(t, syscall.SIGHUP)
	poll.Until(t, 10*time.Second, "the threshold to become 16", func() bool {
		return promotionThreshold(t, p.admin) == 16
	})
	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit status %d\n%s", code, p.stderr.String())
	}
}
