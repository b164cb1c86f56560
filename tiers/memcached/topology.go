package memcached

import (
	"errors"
	"fmt"

	"github.com/strata-cache/strata/tiers/shardmap"
)

// ErrNotManaged is returned by ApplyTopology on a pool whose map comes
// from its own server list (Config.Managed is off).
var ErrNotManaged = errors.New("memcached: the pool is not managed by a control plane")

// Two sources change where keys go, and a pool is driven by one of them:
//
//   - Unmanaged (the default): the configured server list is the whole
//     truth. Its rendezvous map (version 0) is the map; SetServers
//     replaces both.
//   - Managed (Config.Managed): a control plane publishes topologies, and
//     once one is applied only ApplyTopology changes the map. The
//     configured list is then membership only: SetServers adds and removes
//     connections but keeps the published map, so a reload never undoes a
//     publication. Until the first publication there is nothing to
//     protect, and the pool behaves as an unmanaged one.
//
// In both, the pool keeps connections to the union of the configured
// members and the members of the topology in force: a published map may
// name a server this proxy's file does not list yet (files are rolled out
// one host at a time), and a server the file dropped keeps serving its
// shards until a map without it arrives.

// SetServers replaces the configured server list live (a SIGHUP reload
// uses it). Servers that stay keep their connections and health;
// connections to servers that leave close once their replies are in.
//
// The rendezvous map of the new list replaces the map, so only the shards
// of removed servers and the shards that added servers win move; but in a
// managed pool that has applied a published topology, that map stays.
func (p *Pool) SetServers(list []Server) error {
	list, err := checkServers(list)
	if err != nil {
		return err
	}
	m, err := shardmap.Rendezvous(p.mapSeed(), p.cfg.Shards, mapServers(list))
	if err != nil {
		return err
	}
	layout, err := p.cfg.compatLayout(list)
	if err != nil {
		return err
	}
	topo := shardmap.Topology{Map: m}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closedLock {
		return ErrClosed
	}
	p.layout = layout
	if cur := p.route.Load().topo; p.cfg.Managed && cur.Version() > 0 {
		topo = cur
	}
	p.members = list
	p.installLocked(topo)
	return nil
}

// ApplyTopology makes t the topology in force, atomically: no request sees
// t's map with the servers of another. Only a managed pool takes one. A
// topology that does not supersede the one in force (an older version, or
// a different one under the same version) is ignored with an error that
// wraps shardmap.ErrStale, since watch events can arrive late; the same
// topology again is no change and no error. t's map must have the pool's
// number of shards.
func (p *Pool) ApplyTopology(t shardmap.Topology) error {
	if !p.cfg.Managed {
		return ErrNotManaged
	}
	if err := t.Check(p.cfg.Shards); err != nil {
		return err
	}
	if t.Map.Converting() && p.cfg.Compat == "" {
		return ErrNoLayout
	}
	for _, m := range t.MemberList() {
		if _, err := checkServers([]Server{{Addr: m.Addr, Weight: m.Weight}}); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closedLock {
		return ErrClosed
	}
	replace, err := shardmap.Supersedes(p.route.Load().topo, t)
	if !replace {
		return err
	}
	t.Members = t.MemberList() // a copy the caller cannot change
	p.installLocked(t)
	p.cfg.Logger.Info("memcached pool topology applied", "topology", describeTopology(t))
	return nil
}

// Topology returns the topology in force. Its Members is nil when it is
// the pool's own (the servers of the map); Members describes the topology
// only, not servers that are members by the configuration alone.
func (p *Pool) Topology() shardmap.Topology {
	t := p.route.Load().topo
	if t.Members != nil {
		t.Members = t.MemberList() // a copy: the route's is shared
	}
	return t
}

// Managed reports whether a control plane drives the pool's map.
func (p *Pool) Managed() bool { return p.cfg.Managed }

// installLocked makes topo the topology in force, with connections to
// every configured member and every member of topo; servers in neither
// are retired. p.mu is held.
func (p *Pool) installLocked(topo shardmap.Topology) {
	next := make(map[string]*server, len(p.members))
	add := func(addr string) {
		if next[addr] != nil {
			return
		}
		s := p.byAddr[addr]
		if s == nil {
			s = p.newServer(addr)
			if p.started.Load() {
				p.attachConns(s)
			}
		}
		next[addr] = s
	}
	for _, sv := range p.members {
		add(sv.Addr)
	}
	for _, m := range topo.MemberList() {
		add(m.Addr)
	}
	if p.prior != nil {
		for _, sv := range p.cfg.ConvertFrom.Servers {
			add(sv.Addr)
		}
	}
	owners := make([]*server, topo.Map.NumServers())
	for i := range owners {
		owners[i] = next[topo.Map.Server(i).Addr] // a member, by Topology.Check
	}
	all := make([]*server, 0, len(next))
	for _, s := range next {
		all = append(all, s)
	}
	var gone []*server
	for addr, s := range p.byAddr {
		if next[addr] == nil {
			gone = append(gone, s)
		}
	}
	p.byAddr = next
	// Before the route: a server due for a re-entry flush is down before
	// any request can be routed to it under topo.
	p.noteMembersLocked(topo, next)
	rt := newRoute(topo, owners, all)
	if p.layout != nil {
		rt.layout, rt.inOrder = p.layout, make([]*server, len(p.members))
		rt.allLayout = topo.Version() == 0
		for i, sv := range p.members {
			rt.inOrder[i] = next[sv.Addr]
		}
	}
	if p.prior != nil && p.layout != nil {
		rt.prior, rt.priorOrder = p.prior, make([]*server, len(p.cfg.ConvertFrom.Servers))
		for i, sv := range p.cfg.ConvertFrom.Servers {
			rt.priorOrder[i] = next[sv.Addr]
		}
	}
	p.route.Store(rt)
	for _, s := range gone {
		p.retire(s)
	}
}

// memberStateOf is what the topology in force says of addr; a server that
// is a member by the configuration only is active.
func (rt *route) memberStateOf(addr string) shardmap.MemberState {
	return rt.member[addr]
}

// standing is a server's state as the admin API reports it ("up", "down",
// "draining" or "returning"): health first, since a server this proxy
// cannot reach is down whatever the control plane intends for it; then
// what the topology says.
func standing(h healthState, m shardmap.MemberState) string {
	switch {
	case h == stateDown || h == stateProbing:
		return "down"
	case h != stateUp:
		// A health state beyond up/down/probing is a server back from
		// down that is not serving yet ("returning"); report its name.
		return h.String()
	case m == shardmap.MemberDraining:
		return "draining"
	case m == shardmap.MemberReturning:
		return "returning"
	}
	return "up"
}

// describeTopology names a topology for logs: its version and map size.
func describeTopology(t shardmap.Topology) string {
	if t.Map == nil {
		return "none"
	}
	return fmt.Sprintf("v%d (%d shards on %d servers)", t.Version(), t.Map.Shards(), t.Map.NumServers())
}
