package memcached

import "github.com/strata-cache/strata/tiers"

// TierStats is the pool as a tier reports itself: its counters summed
// over servers, then each server with its configured weight, health and
// counters. The pool's hits and misses are named backend_hits and
// backend_misses, since in a view of the tier hits and misses are the
// layering's. Usage is unknown: the items live in the servers.
func (p *Pool) TierStats() tiers.Stats {
	st := p.Stats()
	p.mu.Lock()
	weights := make(map[string]int, len(p.members))
	for _, m := range p.members {
		weights[m.Addr] = m.Weight
	}
	p.mu.Unlock()

	total := st.Total.counters()
	delete(total, "hits")
	delete(total, "misses")
	total["backend_hits"], total["backend_misses"] = st.Total.Hits, st.Total.Misses
	out := tiers.Stats{Counters: total, Servers: make([]tiers.ServerStats, 0, len(st.Servers))}
	for i := range st.Servers {
		s := &st.Servers[i]
		out.Servers = append(out.Servers, tiers.ServerStats{
			Addr: s.Addr, Weight: weights[s.Addr], State: s.State, Counters: s.counters(),
			Timeouts: s.Timeouts, DownRejects: s.DownRejects,
			OtherErrors: s.Errors - min(s.Errors, s.Timeouts+s.DownRejects),
		})
	}
	return out
}

// counters are s's counters by the names the admin API shows.
func (s *ServerStats) counters() map[string]uint64 {
	return map[string]uint64{
		"shards": uint64(s.Shards), "requests": s.Requests, "hits": s.Hits, "misses": s.Misses,
		"errors": s.Errors, "timeouts": s.Timeouts, "waits": s.Waits, "down_rejects": s.DownRejects,
		"reconnects": s.Reconnects, "writes": s.Writes, "marked_down": s.MarkedDown,
		"return_checks": s.ReturnChecks, "stall_held": s.Held,
	}
}
