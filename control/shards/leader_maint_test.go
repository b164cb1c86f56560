package shards

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/store"
)

// A move from or to a server under maintenance holds its handoff for
// MaintenanceGrace; every other move, an ordinary drain's included,
// keeps Grace. Exact outcomes on a fixed clock: Grace 5s, SettleHold 3s,
// MaintenanceGrace 20s, every move in handoff since dt0.
func TestMaintenanceGrace(t *testing.T) {
	// b:1 draining, both its shards to a:1.
	drainB := []MoveEntry{{Shard: 1, From: 1, To: 0}, {Shard: 5, From: 1, To: 0}}
	intoB := MoveEntry{Shard: 0, From: 0, To: 1} // a:1 to b:1, back up
	other := MoveEntry{Shard: 2, From: 2, To: 3} // c:1 to d:1
	const (
		drainSettled = `phase="settle" owner=[0 0 2 3 0 0 2 3] moves=[{1 1 0} {5 1 0}] a:1:up/0/0 b:1:draining/0/0 c:1:up/0/0 d:1:up/0/0`
		drainHeld    = "none"
	)
	for _, tc := range []struct {
		name   string
		states string
		moves  []MoveEntry
		maint  map[string]bool
		drains map[string]bool
		cfg    func(*LeaderConfig)
		after  time.Duration
		want   string
	}{{
		name: "an ordinary drain's move settles after Grace", states: "uxuu", moves: drainB,
		drains: map[string]bool{"b:1": true}, after: 5 * time.Second, want: drainSettled,
	}, {
		name: "a maintenance drain's move holds past Grace", states: "uxuu", moves: drainB,
		drains: map[string]bool{"b:1": true}, maint: map[string]bool{"b:1": true}, after: 20*time.Second - 1, want: drainHeld,
	}, {
		name: "a maintenance drain's move settles after MaintenanceGrace", states: "uxuu", moves: drainB,
		drains: map[string]bool{"b:1": true}, maint: map[string]bool{"b:1": true}, after: 20 * time.Second, want: drainSettled,
	}, {
		name: "maintenance of another server leaves the move its Grace", states: "uxuu", moves: drainB,
		drains: map[string]bool{"b:1": true}, maint: map[string]bool{"c:1": true}, after: 5 * time.Second, want: drainSettled,
	}, {
		name: "without a MaintenanceGrace a maintenance move keeps Grace", states: "uxuu", moves: drainB,
		drains: map[string]bool{"b:1": true}, maint: map[string]bool{"b:1": true}, cfg: func(c *LeaderConfig) { c.MaintenanceGrace = 0 },
		after: 5 * time.Second, want: drainSettled,
	}, {
		name: "a shard returning to a server under maintenance holds past Grace", states: "uuuu", moves: []MoveEntry{intoB, other},
		maint: map[string]bool{"b:1": true}, after: 5 * time.Second,
		// Only the move between two other servers settles.
		want: `phase="handoff" owner=[1 1 3 3 0 1 2 3] moves=[{0 0 1} {2 2 3 settle}] a:1:up/0/0 b:1:up/0/0 c:1:up/0/0 d:1:up/0/0`,
	}, {
		name: "a shard returning to a server under maintenance settles after MaintenanceGrace", states: "uuuu", moves: []MoveEntry{intoB},
		maint: map[string]bool{"b:1": true}, after: 20 * time.Second,
		want: `phase="settle" owner=[1 1 2 3 0 1 2 3] moves=[{0 0 1}] a:1:up/0/0 b:1:up/0/0 c:1:up/0/0 d:1:up/0/0`,
	}, {
		// The walk ended or was cancelled: the ordinary window, at once.
		name: "a move whose server left maintenance settles on Grace", states: "uxuu", moves: drainB,
		drains: map[string]bool{"b:1": true}, maint: map[string]bool{}, after: 6 * time.Second, want: drainSettled,
	}, {
		name: "a conversion keeps ConvertGrace", states: "uuuu", moves: []MoveEntry{{Shard: 1, From: FromLayout, To: 1}},
		maint: map[string]bool{"b:1": true}, cfg: func(c *LeaderConfig) { c.ConvertGrace = 7 * time.Second },
		after: 7 * time.Second, want: `phase="settle" owner=[0 1 2 3 0 1 2 3] moves=[{1 -2 1}] a:1:up/0/0 b:1:up/0/0 c:1:up/0/0 d:1:up/0/0`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := decideCfg()
			cfg.MaintenanceGrace = 20 * time.Second
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			var drained []string
			for a := range tc.drains {
				drained = append(drained, a)
			}
			mem := running(drained...)
			in := roundInput{roundRead: roundRead{Version: 3, Map: decideMap(Handoff, tc.states, tc.moves...), Reports: applied(3),
				Drains: tc.drains, Maintenance: tc.maint}, Now: dt0.Add(tc.after)}
			mem.moves = dated(nil, in.Map, dt0)
			_, d, err := decideRound(cfg, mem, in)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(d.Publish); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// The walk's mark is a row per server, which the leader's round reads
// into roundRead.Maintenance; a server of no tier is refused.
func TestMaintenanceMark(t *testing.T) {
	st := store.NewMemory(store.MemoryOptions{}).Connect()
	view := NewView(st, map[string]TierInfo{"l2": {Shards: 8, Members: []string{"a:1", "b:1"}}})
	l := &Leader{cfg: LeaderConfig{Tier: "l2"}, st: st}
	marked := func() string {
		t.Helper()
		m, err := l.readAddrs(t.Context(), maintPrefix("l2"))
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(m)
	}
	if err := view.SetMaintenance(t.Context(), "l2", "b:1", true); err != nil {
		t.Fatal(err)
	}
	if got := marked(); got != "map[b:1:true]" {
		t.Fatalf("marked %s", got)
	}
	if err := view.SetMaintenance(t.Context(), "l2", "b:1", false); err != nil {
		t.Fatal(err)
	}
	if got := marked(); got != "map[]" {
		t.Fatalf("after the walk: marked %s", got)
	}
	var fe *admin.FieldError
	if err := view.SetMaintenance(t.Context(), "l2", "c:1", true); !errors.As(err, &fe) || fe.Field != "addr" {
		t.Errorf("a server of no tier: %v", err)
	}
	if err := view.SetMaintenance(t.Context(), "l9", "a:1", true); !errors.As(err, &fe) || fe.Field != "tier" {
		t.Errorf("an unknown tier: %v", err)
	}
}
