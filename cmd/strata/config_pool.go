package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/shardmap"
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

// poolKeys maps the fields of memcached.Config that the pool options set
// onto their keys, relative to the tier section.
var poolKeys = map[string]string{
	"RequestTimeout":   "timeout",
	"DialTimeout":      "dial_timeout",
	"FailureThreshold": "failure_threshold",
	"ProbeInterval":    "probe_interval",
	"Shards":           "shards",
}

// checkPool rejects pool options that cannot work, by the pool's own
// rules (memcached.Config.Check); keys are relative to the tier section.
// Only the fields the pool options set are reported here: the server list
// is checked where it is parsed, with its lines, and the item size under
// [limits].
func checkPool(ts tierSettings) []*configError {
	var errs []*configError
	// A zero written in the file is a value, which the pool's Config
	// cannot tell from "not given" (its zero means the default).
	for _, z := range []struct {
		key string
		v   *int64
		hi  int
	}{
		{"failure_threshold", ts.Pool.FailureThreshold, memcached.MaxFailureThreshold},
		{"shards", ts.Pool.Shards, shardmap.MaxShards},
	} {
		if z.v != nil && *z.v == 0 {
			errs = append(errs, &configError{Key: z.key, Msg: fmt.Sprintf("0 is out of range: 1 to %d", z.hi)})
		}
	}
	err := poolConfig(ts, ts.MaxItemSize, slog.Default()).Check()
	list := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		list = joined.Unwrap()
	}
	for _, e := range list {
		var fe *memcached.FieldError
		if errors.As(e, &fe) && poolKeys[fe.Field] != "" {
			errs = append(errs, &configError{Key: poolKeys[fe.Field], Msg: fe.Err.Error()})
		}
	}
	return errs
}
