package main

import (
	"fmt"
	"time"
)

// poolSection is the part of [l1] or [l2] that tunes a memcached pool. A
// zero value means the pool's own default.
type poolSection struct {
	// Timeout bounds the wait for one reply (default 250ms).
	Timeout duration `toml:"timeout" json:"timeout,omitempty"`
	// DialTimeout bounds connecting to a server (default 1s).
	DialTimeout duration `toml:"dial_timeout" json:"dial_timeout,omitempty"`
	// FailureThreshold is how many failures in a row mark a server down
	// (default 3).
	FailureThreshold *int64 `toml:"failure_threshold" json:"failure_threshold,omitempty"`
	// ProbeInterval is how often a down server is probed (default 1s).
	ProbeInterval duration `toml:"probe_interval" json:"probe_interval,omitempty"`
	// RehashOnDown moves a down server's keys onto the others; off by
	// default, because the server serves stale values when it comes back.
	RehashOnDown bool `toml:"rehash_on_down" json:"rehash_on_down,omitempty"`
	// Shards is S, the number of shards keys hash into (default 4096).
	// Every strata of a region must use the same S.
	Shards *int64 `toml:"shards" json:"shards,omitempty"`
	// Managed hands the pool's shard map to the control plane: servers is
	// then membership only, and a reload never replaces a published map.
	Managed bool `toml:"managed" json:"managed,omitempty"`
}

// checkPool rejects pool options that cannot work; keys are relative to
// the tier section.
func checkPool(p *poolSection) []*configError {
	var errs []*configError
	check := func(key string, d duration, lo, hi time.Duration) {
		if d != 0 && (time.Duration(d) < lo || time.Duration(d) > hi) {
			errs = append(errs, &configError{Key: key, Msg: fmt.Sprintf("%s is out of range: %s to %s", d, duration(lo), duration(hi))})
		}
	}
	check("timeout", p.Timeout, time.Millisecond, time.Minute)
	check("dial_timeout", p.DialTimeout, time.Millisecond, time.Minute)
	check("probe_interval", p.ProbeInterval, time.Millisecond, time.Hour)
	if p.FailureThreshold != nil && (*p.FailureThreshold < 1 || *p.FailureThreshold > 1000) {
		errs = append(errs, &configError{Key: "failure_threshold", Msg: fmt.Sprintf("%d is out of range: 1 to 1000", *p.FailureThreshold)})
	}
	if p.Shards != nil && (*p.Shards < 1 || *p.Shards > 1<<20) {
		errs = append(errs, &configError{Key: "shards", Msg: fmt.Sprintf("%d is out of range: 1 to 1048576", *p.Shards)})
	}
	return errs
}
