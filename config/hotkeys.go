package config

import (
	"fmt"
	"time"

	"github.com/strata-cache/strata/internal/configfile"
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

	NearBytes byteSize `toml:"near_bytes" json:"near_bytes"`
}

type hotkeyRuleSection struct {
	Prefix   *string `toml:"prefix" json:"prefix"`
	Kind     string  `toml:"kind" json:"kind"`
	Split    *int64  `toml:"split" json:"split"`
	Adaptive bool    `toml:"adaptive" json:"adaptive"`

	Reply     string   `toml:"reply" json:"reply,omitempty"`
	Staleness duration `toml:"staleness" json:"staleness,omitempty"`
	Near      duration `toml:"near" json:"near,omitempty"`
}

// hotKeys is hotkeys.Config from [hotkeys].
func (r *resolver) hotKeys() {
	h, c := &r.e.HotKeys, hotkeys.DefaultConfig()
	c.Rate = float64(given(&h.Rate, int64(c.Rate)))
	c.Hold = time.Duration(givenOr(&h.Hold, configfile.Duration(c.Hold)))
	c.HalfLife = time.Duration(givenOr(&h.HalfLife, configfile.Duration(c.HalfLife)))
	c.Counters = int(given(&h.Counters, int64(c.Counters)))
	c.Sample = int(given(&h.Sample, int64(c.Sample)))
	c.NearBytes = int64(givenOr(&h.NearBytes, byteSize(c.NearBytes)))
	for i, rs := range h.Rules {
		// Every rule is kept, so that the Config's Rules[i] is the file's
		// rule[i]; a kind or split reported here gets a valid one, not to
		// be reported twice.
		rule := hotkeys.Rule{Prefix: deref(rs.Prefix), Kind: hotkeys.KindCounter, Split: 2, Adaptive: rs.Adaptive,
			Reply: hotkeys.Reply(rs.Reply), Staleness: time.Duration(rs.Staleness), Near: time.Duration(rs.Near)}
		if kind, err := hotkeys.ParseKind(rs.Kind); err != nil {
			r.bad(fmt.Sprintf("hotkeys.rule[%d].kind", i), "%v", err)
		} else {
			rule.Kind = kind
		}
		if rs.Split == nil {
			r.bad(fmt.Sprintf("hotkeys.rule[%d].split", i), "every rule needs split (K, 2 to %d)", hotkeys.MaxSplit)
		} else {
			rule.Split = int(*rs.Split)
		}
		c.Rules = append(c.Rules, rule)
	}
	r.fields(c.Validate(), hotkeysKeys, "hotkeys")
	r.s.HotKeys = c
}
