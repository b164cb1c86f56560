package memcached

import (
	"fmt"
	"math"
	"sort"

	"github.com/strata-cache/strata/tiers/shardmap"
)

// route is an immutable snapshot of where keys go: the shard map and the
// server state of each server it names.
type route struct {
	m      *shardmap.Map
	owners []*server // owners[i] is the server m.Server(i)
	all    []*server // every server of the pool (flush_all, timeout checks), by address
}

func newRoute(m *shardmap.Map, owners, all []*server) *route {
	sorted := append([]*server(nil), all...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].addr < sorted[j].addr })
	return &route{m: m, owners: owners, all: sorted}
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

// SetServers replaces the server list live (a SIGHUP reload uses it): the
// static rendezvous map of the new list replaces the current map, so only
// the shards of removed servers and the shards that added servers win
// move. Servers that stay keep their connections and health. Connections
// to removed servers close once their replies are in.
func (p *Pool) SetServers(list []Server) error {
	list, err := checkServers(list)
	if err != nil {
		return err
	}
	m, err := shardmap.Rendezvous(p.mapSeed(), p.cfg.Shards, mapServers(list))
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closedLock {
		return ErrClosed
	}
	next := make(map[string]*server, len(list))
	owners := make([]*server, len(list))
	for i, sv := range list {
		s := p.byAddr[sv.Addr]
		if s == nil {
			s = p.newServer(sv.Addr)
			if p.started.Load() {
				p.attachConns(s)
			}
		}
		owners[i] = s
		next[sv.Addr] = s
	}
	var gone []*server
	for addr, s := range p.byAddr {
		if next[addr] == nil {
			gone = append(gone, s)
		}
	}
	p.byAddr = next
	p.route.Store(newRoute(m, owners, owners))
	for _, s := range gone {
		p.retire(s)
	}
	return nil
}

// SetShardMap installs a map computed elsewhere (the shard-assignment
// loop). It must have the pool's number of shards and name only servers of
// the pool; servers it leaves out keep their connections but get no keys.
func (p *Pool) SetShardMap(m *shardmap.Map) error {
	if m == nil {
		return fmt.Errorf("memcached: nil shard map")
	}
	if m.Shards() != p.cfg.Shards {
		return fmt.Errorf("memcached: shard map has %d shards, the pool %d", m.Shards(), p.cfg.Shards)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closedLock {
		return ErrClosed
	}
	owners := make([]*server, m.NumServers())
	for i := range owners {
		s := p.byAddr[m.Server(i).Addr]
		if s == nil {
			return fmt.Errorf("memcached: shard map names %s, which is not in the pool (use SetServers first)", m.Server(i).Addr)
		}
		owners[i] = s
	}
	p.route.Store(newRoute(m, owners, p.route.Load().all))
	return nil
}

// ShardMap returns the map in force.
func (p *Pool) ShardMap() *shardmap.Map { return p.route.Load().m }

// ShardOf returns the shard of key.
func (p *Pool) ShardOf(key []byte) int {
	return shardmap.Shard(p.cfg.Seed, key, p.cfg.Shards)
}

// ServerFor returns the address of the server that owns key's shard.
func (p *Pool) ServerFor(key []byte) string {
	return p.route.Load().m.OwnerAddr(p.ShardOf(key))
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
