package main

import (
	"log/slog"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/shards"
	"github.com/strata-cache/strata/internal/tlsconn"
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

// tlsHandshakes reads the pool's TLS handshake counts; ok is false
// without TLS, or for a tier that is no pool (nil).
func (t *poolTier) tlsHandshakes() (tlsconn.Tally, bool) {
	if t == nil {
		return tlsconn.Tally{}, false
	}
	return t.p.TLSHandshakes()
}

func newPoolTier(ts config.TierSettings, env tierEnv) (*poolTier, error) {
	p, err := memcached.New(ts.PoolConfig(ts.MaxItemSize, env.log), env.loops)
	if err != nil {
		return nil, err
	}
	return &poolTier{p: p}, nil
}

func (p *poolTier) tier() tiers.Tier { return p.p }

func (p *poolTier) appendStats(dst []byte, prefix string) []byte {
	return p.p.AppendStats(dst, prefix+"pool")
}

func (p *poolTier) setServers(ss []config.ServerEntry) error {
	return p.p.SetServers(config.PoolServers(ss))
}

func (p *poolTier) close() { _ = p.p.Close() }

// The control plane's agent drives a managed pool through shards.Pool.
var _ shards.Pool = (*poolTier)(nil)

// ApplyTopology applies a published topology.
func (p *poolTier) ApplyTopology(t shardmap.Topology) error { return p.p.ApplyTopology(t) }

// ShardLoad fills l with the pool's per-shard counters.
func (p *poolTier) ShardLoad(l *shards.Load) { p.p.ShardLoad((*memcached.ShardLoad)(l)) }

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
