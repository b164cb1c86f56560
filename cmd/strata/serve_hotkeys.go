package main

import (
	"fmt"
	"reflect"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/hotmarks"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

// buildHotKeys puts the hot-key tier in front of the layering: it is what
// the proxy serves from. It is always there, so a reload can add rules;
// with none, every request passes straight through.
func (a *app) buildHotKeys(s *config.Settings) (tiers.Tier, error) {
	d := hotkeys.Deps{Inner: a.layered, Loops: a.loops}
	if a.l1 != nil {
		d.L1 = a.l1.tier
		if a.l1.pool != nil {
			d.L1Placer = a.l1.pool.p
		}
	}
	if a.l2.pool != nil {
		d.L2Placer = a.l2.pool.p
	}
	d.Async = len(a.pools()) > 0
	cfg := s.HotKeys
	cfg.L1MaxTTL = s.Layered.L1MaxTTL
	// The serving clock ticks once a second, which is as fine as the
	// detector needs (its half-life is seconds) and costs an atomic load.
	clock := a.clock
	cfg.Now = func() int64 { return clock.Now() * int64(time.Second) }
	if c := s.Control; c.Enabled && len(c.Etcd) > 0 {
		// [control] etcd: adaptive marks are shared with the fleet, so
		// every strata splits the same keys.
		st, err := a.stores.open(c)
		if err != nil {
			return nil, fmt.Errorf("hotkeys: %w", err)
		}
		sm, err := hotmarks.Open(st, hotmarks.Config{Hold: cfg.Hold})
		if err != nil {
			return nil, fmt.Errorf("hotkeys: %w", err)
		}
		a.hotmarks, d.Marks = sm, sm
	}
	t, err := hotkeys.New(cfg, d)
	if err != nil {
		return nil, fmt.Errorf("hotkeys: %w", err)
	}
	a.hotkeys = t
	return t, nil
}

// reloadHotKeys applies changed rules live; the detector's settings need a
// restart.
func (a *app) reloadHotKeys(r *reloading) error {
	cur, next := r.Cur, r.Next
	if !reflect.DeepEqual(cur.HotKeys.Rules, next.HotKeys.Rules) {
		if err := a.hotkeys.SetRules(next.HotKeys.Rules); err != nil {
			return fmt.Errorf("hotkeys.rule: %w", err)
		}
		r.Merged.HotKeys.Rules = next.HotKeys.Rules
		r.Merged.Effective.HotKeys.Rules = next.Effective.HotKeys.Rules
		r.Applied("hotkeys.rule", len(cur.HotKeys.Rules), len(next.HotKeys.Rules))
	}
	c, n := cur.Effective.HotKeys, next.Effective.HotKeys
	c.Rules, n.Rules = nil, nil
	if !reflect.DeepEqual(c, n) {
		r.Kept("hotkeys (rate, hold, half_life, counters, sample)", config.AsJSON(c), config.AsJSON(n))
	}
	return nil
}

// HotKeys implements admin.HotKeyView.
func (v adminView) HotKeys() admin.HotKeys {
	t := v.a.hotkeys
	out := admin.HotKeys{Counters: t.TierStats().Counters}
	for _, h := range t.HotKeys() {
		out.Keys = append(out.Keys, admin.HotKey{
			Key: h.Key, Kind: h.Kind.String(), K: h.K, Split: h.Split,
			ReadsPerSec: h.ReadsPerSec, WritesPerSec: h.WritesPerSec,
			Since: time.Unix(0, h.Since).UTC(),
		})
	}
	return out
}

var _ admin.HotKeyView = adminView{}

// stopHotMarks stops sharing marks, then closes their store client.
func (a *app) stopHotMarks() {
	if a.hotmarks != nil {
		_ = a.hotmarks.Close()
	}
}
