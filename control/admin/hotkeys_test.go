package admin

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/stall"
)

type hotKeyState struct{}

func (hotKeyState) HotKeys() HotKeys {
	return HotKeys{
		Keys:     []HotKey{{Key: "votes:1", Kind: "counter", K: 8, Split: true, WritesPerSec: 1500, Since: time.Unix(1700000000, 0).UTC()}},
		Counters: map[string]uint64{"split_ops": 42},
	}
}

// TestHotKeysEndpoint: GET /admin/v1/hotkeys lists the keys with the
// documented field names, needs the token like every /admin/v1 call, and
// the counters reach /metrics; without a HotKeyView the endpoint is absent.
func TestHotKeysEndpoint(t *testing.T) {
	st := newState()
	s, err := New(Config{Listen: "127.0.0.1:0", Token: "tok", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Promotion: st, Sampler: st, Tiers: st, Config: st, Metrics: st, Clock: stall.Process(), HotKeys: hotKeyState{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	if r := do(t, s, "GET", "/admin/v1/hotkeys", "", ""); r.code != 401 {
		t.Fatalf("without the token: %d", r.code)
	}
	r := do(t, s, "GET", "/admin/v1/hotkeys", "tok", "")
	m := r.json(t)
	keys, _ := m["keys"].([]any)
	if r.code != 200 || len(keys) != 1 {
		t.Fatalf("%d %s", r.code, r.body)
	}
	k := keys[0].(map[string]any)
	for _, f := range []string{"key", "kind", "k", "split", "reads_per_sec", "writes_per_sec", "since"} {
		if _, ok := k[f]; !ok {
			t.Errorf("field %s missing: %s", f, r.body)
		}
	}
	if r := do(t, s, "GET", "/metrics", "", ""); !strings.Contains(string(r.body), `strata_hotkeys_events_total{event="split_ops"} 42`) || !strings.Contains(string(r.body), "strata_hotkeys_keys 1") {
		t.Fatalf("metrics lack the hot-key counters")
	}
	plain := startServer(t, Config{}, newState())
	if r := do(t, plain, "GET", "/admin/v1/hotkeys", "", ""); r.code != 404 {
		t.Fatalf("without a HotKeyView: %d", r.code)
	}
}
