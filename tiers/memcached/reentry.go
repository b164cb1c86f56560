package memcached

import "github.com/strata-cache/strata/tiers/shardmap"

// Re-entry: a server that lost its shards and gets them back may hold
// values that were overwritten elsewhere meanwhile. The pool's own health
// machine covers a server it saw fail (returning.go), but a pool can miss
// the whole episode: the control plane may have taken the server away
// because other proxies could not reach it, and a pool whose watch was
// slow may jump from a map where the server owned shards straight to one
// where it owns them again. So the topology carries an incarnation per
// member (shardmap.Member), and a pool flushes a member before routing to
// it again when
//
//   - the topology lists it as returning (it owns nothing, and the control
//     plane waits for a flush report, Flushed, before giving it shards), or
//   - it comes back under an incarnation newer than the one the pool knew
//     for it (the pool skipped the returning map),
//
// unless the pool has already flushed that incarnation. The flush reuses
// the returning protocol: the server is marked down for a spell of its
// own, every loop fences its connections, the server runs what it still
// holds from us, then flush_all, then up. Until then its shards fail fast
// like a down server's; a write is never acknowledged on it, a read never
// served from it.
//
// The rule for the control plane, which the pool cannot check alone:
// a server whose shards were taken away (failover, a final move, a
// removal) gets shards again only under a bumped incarnation after a
// flush was reported, or once every value it held has expired (max item
// TTL since it lost them). A pool that first learns of a server takes its
// incarnation as it is: it has no history to doubt.

// noteMembersLocked applies the re-entry rule to the members of topo.
// p.mu is held; next holds the servers topo will route to.
func (p *Pool) noteMembersLocked(topo shardmap.Topology, next map[string]*server) {
	if p.incs == nil {
		p.incs, p.flushed = map[string]uint64{}, map[string]uint64{}
	}
	for _, m := range topo.MemberList() {
		known, seen := p.incs[m.Addr]
		p.incs[m.Addr] = max(known, m.Incarnation)
		done, flushed := p.flushed[m.Addr]
		if !mustFlush(m, known, seen, done, flushed) {
			continue
		}
		if s := next[m.Addr]; s != nil {
			s.forceFlushLocked(p, m.Incarnation)
		}
	}
}

// mustFlush is the re-entry rule as a pure decision: member m, whose
// incarnation the pool knew as known (seen: at all), and had flushed up
// to done (flushed: ever).
func mustFlush(m shardmap.Member, known uint64, seen bool, done uint64, flushed bool) bool {
	if flushed && done >= m.Incarnation {
		return false
	}
	return m.State == shardmap.MemberReturning || (seen && m.Incarnation > known)
}

// Flushed reports the newest incarnation of addr this pool has flushed
// (and whether it ever has); the control plane gives a returning server
// shards once a pool reports its incarnation flushed.
func (p *Pool) Flushed(addr string) (uint64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	inc, ok := p.flushed[addr]
	return inc, ok
}

// noteFlushed records that addr was flushed for incarnation inc.
func (p *Pool) noteFlushed(addr string, inc uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.flushed == nil {
		p.flushed = map[string]uint64{}
	}
	if old, ok := p.flushed[addr]; !ok || inc > old {
		p.flushed[addr] = inc
	}
}

// forceFlushLocked takes s out of routing until it has been flushed for
// incarnation inc, through the returning protocol. p.mu is held.
func (s *server) forceFlushLocked(p *Pool, inc uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.mustFlush || inc > s.flushFor {
		s.flushFor = inc
	}
	s.mustFlush = true
	if s.h.force(p.now()) {
		s.downGen.Store(s.h.downs) // before the state, as in failure
	}
	s.state.Store(uint32(s.h.state))
	if !s.probing && !s.retired.Load() && !p.closedLock {
		s.probing = true
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.probeLoop(s)
		}()
	}
}

// takeFlush reports whether the returning protocol must flush s, and for
// which incarnation.
func (s *server) takeFlush() (inc uint64, forced bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushFor, s.mustFlush
}

// flushedFor records a flush done for inc; a request for a newer
// incarnation that came meanwhile stays pending.
func (s *server) flushedFor(inc uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mustFlush && s.flushFor == inc {
		s.mustFlush = false
	}
}
