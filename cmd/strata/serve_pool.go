package main

import (
	"log/slog"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/shards"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// This file is the only one that knows the memcached pool package: every
// other part of serve goes through poolTier.

// tierEnv is what a pool takes from the server being built.
type tierEnv struct {
	log *slog.Logger
	// now is the embedded stores' clock: a once-a-second wall clock the
	// app owns, as memcached keeps its current_time.
	now func() int64
	// loops are the proxy's event loops; a pool joins them when built,
	// so the proxy starts and flushes it.
	loops memcached.Loops
}

// poolTier is a memcached pool tier.
type poolTier struct {
	p *memcached.Pool
	// totals sums the servers' item and memory stats for the stats
	// command (L2 only: the tier of record); nil otherwise.
	totals *memcached.ServerTotals
}

// poolConfig maps a tier's settings onto the pool's Config.
func poolConfig(ts tierSettings, maxItem int, log *slog.Logger) memcached.Config {
	o := ts.Pool
	// From the pool's defaults: a key not given keeps its default, a 0
	// given is a value (and refused by the pool's Validate).
	c := memcached.DefaultConfig()
	c.Servers = poolServers(ts.Servers)
	for _, d := range []struct {
		dst *time.Duration
		v   duration
	}{{&c.DialTimeout, o.DialTimeout}, {&c.RequestTimeout, o.Timeout}, {&c.ProbeInterval, o.ProbeInterval}} {
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

func poolServers(ss []serverEntry) []memcached.Server {
	out := make([]memcached.Server, len(ss))
	for i, s := range ss {
		out[i] = memcached.Server{Addr: s.Addr, Weight: s.Weight, Name: s.Name}
	}
	return out
}

func newPoolTier(ts tierSettings, env tierEnv) (*poolTier, error) {
	p, err := memcached.New(poolConfig(ts, ts.MaxItemSize, env.log), env.loops)
	if err != nil {
		return nil, err
	}
	return &poolTier{p: p}, nil
}

func (p *poolTier) tier() tiers.Tier { return p.p }

func (p *poolTier) appendStats(dst []byte, prefix string) []byte {
	return p.p.AppendStats(dst, prefix+"pool")
}

func (p *poolTier) setServers(ss []serverEntry) error { return p.p.SetServers(poolServers(ss)) }

func (p *poolTier) close() { _ = p.p.Close() }

// The control plane's agent drives a managed pool through shards.Pool.
var _ shards.Pool = (*poolTier)(nil)

// ApplyTopology applies a published topology.
func (p *poolTier) ApplyTopology(t shardmap.Topology) error { return p.p.ApplyTopology(t) }

// ShardLoad returns the pool's per-shard counters.
func (p *poolTier) ShardLoad() (requests, bytes, reads []uint64) {
	l := p.p.ShardLoad()
	return l.Requests, l.Bytes, l.Reads
}

// Unreachable lists the servers the pool does not route to: down, or
// answering again but not yet made safe (requests it had queued before
// it went down may still run). The leader flushes a returning server only
// once no pool lists it, so such a late request cannot land after the
// flush.
func (p *poolTier) Unreachable() []string {
	var out []string
	for _, s := range p.p.Stats().Servers {
		if s.State != admin.ServerUp {
			out = append(out, s.Addr)
		}
	}
	return out
}

// initialMap is the map the pool serves before any publication.
func (p *poolTier) initialMap() *shardmap.Map { return p.p.ShardMap() }

// shardCount is the pool's S.
func (p *poolTier) shardCount() int { return p.p.ShardMap().Shards() }
