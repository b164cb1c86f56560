package main

import (
	"fmt"
	"time"

	"github.com/strata-cache/strata/tiers/hotkeys"
)

// hotkeysSection is [hotkeys]: the hot-key tier's rules and detector.
type hotkeysSection struct {
	Rate     *int64              `toml:"rate" json:"rate"`
	Hold     duration            `toml:"hold" json:"hold"`
	HalfLife duration            `toml:"half_life" json:"half_life"`
	Counters *int64              `toml:"counters" json:"counters"`
	Sample   *int64              `toml:"sample" json:"sample"`
	Rules    []hotkeyRuleSection `toml:"rule" json:"rule,omitempty"`
}

type hotkeyRuleSection struct {
	Prefix   *string `toml:"prefix" json:"prefix"`
	Kind     string  `toml:"kind" json:"kind"`
	Split    *int64  `toml:"split" json:"split"`
	Adaptive bool    `toml:"adaptive" json:"adaptive"`
}

// resolveHotKeys fills h's defaults and maps it onto the tier's Config,
// reporting each bad key.
func resolveHotKeys(h *hotkeysSection, bad func(key, format string, args ...any)) hotkeys.Config {
	intOr := func(p **int64, def int64) int64 {
		if *p == nil {
			v := def
			*p = &v
		}
		return **p
	}
	c := hotkeys.Config{}
	if rate := intOr(&h.Rate, hotkeys.DefaultRate); rate < 1 || rate > 1e9 {
		bad("hotkeys.rate", "%d is out of range: 1 to 1000000000 accesses per second", rate)
	} else {
		c.Rate = float64(rate)
	}
	if h.Hold == 0 {
		h.Hold = duration(hotkeys.DefaultHold)
	}
	if d := time.Duration(h.Hold); d < time.Second || d > 24*time.Hour {
		bad("hotkeys.hold", "%s is out of range: 1s to 24h", h.Hold)
	}
	c.Hold = time.Duration(h.Hold)
	if h.HalfLife == 0 {
		h.HalfLife = duration(hotkeys.DefaultHalfLife)
	}
	if d := time.Duration(h.HalfLife); d < 100*time.Millisecond || d > time.Hour {
		bad("hotkeys.half_life", "%s is out of range: 100ms to 1h", h.HalfLife)
	}
	c.HalfLife = time.Duration(h.HalfLife)
	if n := intOr(&h.Counters, hotkeys.DefaultCounters); n < 8 || n > 1<<16 {
		bad("hotkeys.counters", "%d is out of range: 8 to 65536", n)
	} else {
		c.Counters = int(n)
	}
	if n := intOr(&h.Sample, hotkeys.DefaultSample); n < 1 || n > 1<<20 {
		bad("hotkeys.sample", "%d is out of range: 1 (every access) to 1048576", n)
	} else {
		c.Sample = int(n)
	}
	seen := map[string]bool{}
	for i, r := range h.Rules {
		key := fmt.Sprintf("hotkeys.rule[%d]", i)
		kind, err := hotkeys.ParseKind(r.Kind)
		switch {
		case r.Prefix == nil || *r.Prefix == "":
			bad(key+".prefix", "every rule needs a non-empty prefix")
			continue
		case seen[*r.Prefix]:
			bad(key+".prefix", "%q is given twice", *r.Prefix)
			continue
		case err != nil:
			bad(key+".kind", "%q: want counter, list or read", r.Kind)
			continue
		case r.Split == nil:
			bad(key+".split", "every rule needs split (K, 2 to %d)", hotkeys.MaxSplit)
			continue
		case *r.Split < 2 || *r.Split > hotkeys.MaxSplit:
			bad(key+".split", "%d is out of range: 2 to %d", *r.Split, hotkeys.MaxSplit)
			continue
		}
		seen[*r.Prefix] = true
		c.Rules = append(c.Rules, hotkeys.Rule{Prefix: *r.Prefix, Kind: kind, Split: int(*r.Split), Adaptive: r.Adaptive})
	}
	if err := hotkeys.ValidateRules(c.Rules); err != nil {
		bad("hotkeys", "%v", err)
	}
	return c
}
