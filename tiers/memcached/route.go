package memcached

import (
	"math"
	"sort"

	"github.com/strata-cache/strata/tiers/memcached/compat"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// route is an immutable snapshot of where keys go: the topology in force,
// its shard map and the server state of each server it names.
type route struct {
	topo   shardmap.Topology
	m      *shardmap.Map // topo.Map
	owners []*server     // owners[i] is the server m.Server(i)
	all    []*server     // every server of the pool (flush_all, timeout checks), by address
	// member is what the topology says of each server of all; servers that
	// are members by the configuration only are absent (active).
	member map[string]shardmap.MemberState
	// layout, in a compat pool, picks the server instead of m: it indexes
	// inOrder, the configured servers in their configured order.
	layout  *compat.Layout
	inOrder []*server
	// allLayout: the layout places every key, because the map is the
	// pool's own (no control plane has published one). Under a published
	// map, the map says which shards the layout places (compat.go).
	allLayout bool
	// prior, in a conversion between layouts (prior.go), is the layout
	// the shards on the layout are served by, indexing priorOrder; layout
	// then serves the converted shards, per key, instead of their owners.
	prior      *compat.Layout
	priorOrder []*server
}

// serverFor is the server key goes to under rt, given its shard.
func (rt *route) serverFor(key []byte, shard int) *server {
	if rt.layout != nil {
		switch {
		case rt.allLayout || rt.m.OnLayout(shard):
			return rt.sourceServer(key)
		case rt.prior != nil:
			return rt.layoutServer(key)
		}
	}
	return rt.owners[rt.m.Owner(shard)]
}

// onLayout is how many shards rt places by the compat layout.
func (rt *route) onLayout() int {
	switch {
	case rt.layout == nil:
		return 0
	case rt.allLayout:
		return rt.m.Shards()
	}
	return rt.m.OnLayoutCount()
}

// layoutServer is the server the compat layout names for key; rt has a
// layout.
func (rt *route) layoutServer(key []byte) *server {
	return rt.inOrder[rt.layout.Server(key)]
}

func newRoute(topo shardmap.Topology, owners, all []*server) *route {
	sorted := append([]*server(nil), all...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].addr < sorted[j].addr })
	rt := &route{topo: topo, m: topo.Map, owners: owners, all: sorted, member: map[string]shardmap.MemberState{}}
	for _, m := range topo.MemberList() {
		rt.member[m.Addr] = m.State
	}
	return rt
}

// fallback is the server a down owner's shard goes to under RehashOnDown:
// the up server with the highest rendezvous score for the shard, or nil.
// It costs one hash per server, and only runs for shards of down servers.
func (rt *route) fallback(seed uint64, shard int) *server {
	var best *server
	bestScore := math.Inf(-1)
	for i, s := range rt.owners {
		if healthState(s.state.Load()) != stateUp {
			continue
		}
		if sc := shardmap.Score(seed, shard, rt.m.Server(i)); sc > bestScore {
			best, bestScore = s, sc
		}
	}
	return best
}

// ShardMap returns the map in force.
func (p *Pool) ShardMap() *shardmap.Map { return p.route.Load().m }

// ShardOf returns the shard of key.
func (p *Pool) ShardOf(key []byte) int {
	return shardmap.Shard(p.cfg.Seed, key, p.cfg.Shards)
}

// ServerFor returns the address of the server that holds key: the owner
// of its shard, or the server the compat layout names.
func (p *Pool) ServerFor(key []byte) string {
	return p.route.Load().serverFor(key, p.ShardOf(key)).addr
}

// retire takes a removed server out of service: its probe stops, and each
// loop closes its connection once the replies in flight are in. p.mu is
// held.
func (p *Pool) retire(s *server) {
	s.retired.Store(true)
	if !p.started.Load() {
		return
	}
	for i := range p.lstates {
		bc := s.conns[i]
		p.loops.Run(i, bc.retire)
	}
}
