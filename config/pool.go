package config

import (
	"log/slog"
	"strings"
	"time"

	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/tiers/memcached"
)

// PoolSection is the part of [l1] or [l2] that tunes a memcached pool. A
// zero value means the pool's own default.
type PoolSection struct {
	// Timeout bounds the wait for one reply (default 250ms).
	Timeout duration `toml:"timeout" json:"timeout,omitempty"`
	// DialTimeout bounds connecting to a server (default 1s).
	DialTimeout duration `toml:"dial_timeout" json:"dial_timeout,omitempty"`
	// FailureThreshold is how many failures in a row mark a server down
	// (default 3).
	FailureThreshold *int64 `toml:"failure_threshold" json:"failure_threshold,omitempty"`
	// ProbeInterval is how often a down server is probed (default 1s).
	ProbeInterval duration `toml:"probe_interval" json:"probe_interval,omitempty"`
	// MoveLeaseTTL is a fill's lease during a move, and the settle hold.
	MoveLeaseTTL duration `toml:"move_lease_ttl" json:"move_lease_ttl,omitempty"`
	// RehashOnDown moves a down server's keys onto the others; off by
	// default, because the server serves stale values when it comes back.
	RehashOnDown bool `toml:"rehash_on_down" json:"rehash_on_down,omitempty"`
	// Shards is S, the number of shards keys hash into (default 4096).
	// Every strata of a region must use the same S.
	Shards *int64 `toml:"shards" json:"shards,omitempty"`
	// Managed hands the pool's shard map to the control plane: servers is
	// then membership only, and a reload never replaces a published map.
	Managed bool `toml:"managed" json:"managed,omitempty"`
	// Compat and the incumbent's settings: memcached.Config says what each is.
	Compat       string `toml:"compat" json:"compat,omitempty"`
	Distribution string `toml:"distribution" json:"distribution,omitempty"`
	Hash         string `toml:"hash" json:"hash,omitempty"`
	HashTag      string `toml:"hash_tag" json:"hash_tag,omitempty"`
	CompatSeed   uint32 `toml:"compat_seed" json:"compat_seed,omitempty"`
	// ConvertFrom ([l2.convert_from]) is the compat layout the keys are on
	// now, when compat names the one they go to: memcached.PriorLayout.
	ConvertFrom *ConvertFromSection `toml:"convert_from" json:"convert_from,omitempty"`
	// TLS reaches the servers over TLS (memcached -Z), verifying their
	// certificates against CA (empty: the system's roots) under
	// ServerName (empty: the address's host); Cert and Key are the
	// client certificate for servers that require one.
	TLS        bool   `toml:"tls" json:"tls,omitempty"`
	CA         string `toml:"ca" json:"ca,omitempty"`
	Cert       string `toml:"cert" json:"cert,omitempty"`
	Key        string `toml:"key" json:"key,omitempty"`
	ServerName string `toml:"server_name" json:"server_name,omitempty"`
}

// ConvertFromSection is a pool's convert_from table: the keys of the same
// names in the pool's section, for the layout it converts from.
type ConvertFromSection struct {
	Servers      []ServerEntry `toml:"servers" json:"servers,omitempty"`
	Compat       string        `toml:"compat" json:"compat,omitempty"`
	Distribution string        `toml:"distribution" json:"distribution,omitempty"`
	Hash         string        `toml:"hash" json:"hash,omitempty"`
	HashTag      string        `toml:"hash_tag" json:"hash_tag,omitempty"`
	CompatSeed   uint32        `toml:"compat_seed" json:"compat_seed,omitempty"`
}

// poolKeys maps the fields of memcached.Config that a tier's section sets
// onto their keys. The item size is limits.max_item_size, judged by the
// proxy's Validate with the same bound.
func poolKeys(tier string) fieldKeys {
	keys := fieldKeys{
		"Servers":          tier + ".servers",
		"RequestTimeout":   tier + ".timeout",
		"DialTimeout":      tier + ".dial_timeout",
		"FailureThreshold": tier + ".failure_threshold",
		"ProbeInterval":    tier + ".probe_interval",
		"MoveLeaseTTL":     tier + ".move_lease_ttl",
		"Shards":           tier + ".shards",
		"TLS.On":           tier + ".tls",
		"TLS.Cert":         tier + ".cert",
		"MaxItemSize":      "",
		"Managed":          tier + ".managed",
		"Compat":           tier + ".compat",
		"Distribution":     tier + ".distribution",
		"Hash":             tier + ".hash",
		"HashTag":          tier + ".hash_tag",
		"CompatSeed":       tier + ".compat_seed",
		"ConvertFrom":      tier + ".convert_from",
	}
	for _, k := range []string{"Servers", "Compat", "Distribution", "Hash", "HashTag", "CompatSeed"} {
		keys["ConvertFrom."+k] = tier + ".convert_from" + strings.TrimPrefix(keys[k], tier)
	}
	return keys
}

// PoolConfig maps a memcached tier's settings onto the pool's Config.
func (ts TierSettings) PoolConfig(maxItem int, log *slog.Logger) memcached.Config {
	o := ts.Pool
	// From the pool's defaults: a key not given keeps its default, a 0
	// given is a value (and refused by the pool's Validate).
	c := memcached.DefaultConfig()
	c.Servers = PoolServers(ts.Servers)
	for _, d := range []struct {
		dst *time.Duration
		v   duration
	}{{&c.DialTimeout, o.DialTimeout}, {&c.RequestTimeout, o.Timeout}, {&c.ProbeInterval, o.ProbeInterval}, {&c.MoveLeaseTTL, o.MoveLeaseTTL}} {
		if d.v != 0 {
			*d.dst = time.Duration(d.v)
		}
	}
	c.RehashOnDown = o.RehashOnDown
	// L1 writes skip a down server's copies: flush it before it
	// serves again. L2 is the tier of record and keeps its data.
	c.FlushOnReturn = ts.Name == "l1"
	c.Managed = o.Managed
	c.Compat, c.Distribution, c.Hash, c.HashTag, c.CompatSeed = o.Compat, o.Distribution, o.Hash, o.HashTag, o.CompatSeed
	if f := o.ConvertFrom; f != nil {
		c.ConvertFrom = &memcached.PriorLayout{Servers: PoolServers(f.Servers), Compat: f.Compat, Distribution: f.Distribution,
			Hash: f.Hash, HashTag: f.HashTag, CompatSeed: f.CompatSeed}
	}
	c.TLS = tlsconn.Dial{On: o.TLS, CA: o.CA, Cert: o.Cert, Key: o.Key, ServerName: o.ServerName}
	c.MaxItemSize = maxItem
	c.Logger = log.With("tier", ts.Name)
	if o.FailureThreshold != nil {
		c.FailureThreshold = int(*o.FailureThreshold)
	}
	if o.Shards != nil {
		c.Shards = int(*o.Shards)
	}
	return c
}

// PoolServers maps a pool's server list onto the pool's.
func PoolServers(ss []ServerEntry) []memcached.Server {
	out := make([]memcached.Server, len(ss))
	for i, s := range ss {
		out[i] = memcached.Server{Addr: s.Addr, Weight: s.Weight, Name: s.Name}
	}
	return out
}
