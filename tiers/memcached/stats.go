package memcached

import (
	"sort"
	"strconv"
)

// ServerStats are one server's counters, summed over event loops.
type ServerStats struct {
	Addr  string
	State string // health: "up", "down" or "returning" (answered a probe; being made safe)
	// Standing is the state the admin API reports: "up", "down",
	// "draining" or "returning" — health first (a server this proxy cannot
	// reach is down), then what the topology in force says of it.
	Standing string
	// Shards is how many shards the map in force gives the server.
	Shards int
	// Requests counts requests routed to the server, including those
	// failed at once; Hits and Misses count get outcomes; Errors counts
	// requests that ended in StatusError, of which Timeouts timed out
	// and DownRejects found the server down. Waits counts requests that
	// found their connection at a bound (MaxPendingPerConn,
	// MaxBufferedBytesPerConn) and waited for room; they do not fail.
	Requests, Hits, Misses, Errors uint64
	Timeouts, Waits, DownRejects   uint64
	Reconnects                     uint64 // dials after the first
	Writes                         uint64 // batches written; Requests/Writes is the batching factor
	MarkedDown                     uint64 // times the server was marked down
	ReturnChecks                   uint64 // "stats conns" asked while returning
	// Held counts writes queued but not yet sent at a process stall,
	// failed rather than sent after it (stall.go); they count in Errors.
	Held uint64
}

// PoolStats are a pool's counters: the sum over servers, then each server.
type PoolStats struct {
	// Version is that of the topology in force (0: the pool's own map).
	Version uint64
	Total   ServerStats // Addr, State and Standing empty; Shards is S
	Servers []ServerStats
	Moves   MoveStats
	// Replicas count the work of read replicas (replica.go).
	Replicas ReplicaStats
}

// ReplicaStats count the work of read replicas.
type ReplicaStats struct {
	// Shards is how many shards the map in force gives replicas.
	Shards int
	// Reads counts reads sent to a serving replica rather than the owner;
	// Fills the replica misses filled from the owner, FillsLost those
	// whose store lost to a write or a new map (answered as misses).
	Reads, Fills, FillsLost uint64
	// WriteFailed counts writes reported failed because the delete at a
	// replica failed.
	WriteFailed uint64
}

// MoveStats count the work of shard moves (move.go).
type MoveStats struct {
	// InFlight is how many shards the map in force has moving.
	InFlight int
	// OnLayout is how many shards a compat pool still places by its
	// layout: all of them until a control plane publishes a map, then
	// those the map has not converted yet (compat.go).
	OnLayout int
	// Fills counts handoff misses filled from the source; FillsLost those
	// whose store at the destination failed because a write or delete got
	// there first (or the map moved on), answered as misses; LeaseMisses
	// the reads that found another reader's placeholder.
	Fills, FillsLost, LeaseMisses uint64
	// OtherFailed counts writes reported failed because the delete at the
	// other side of the move failed.
	OtherFailed uint64
}

// Stats returns a snapshot of the counters. It takes no lock that a
// request takes.
func (p *Pool) Stats() PoolStats {
	rt := p.route.Load()
	counts := rt.m.Counts()
	shards := make(map[string]int, len(counts))
	for i, c := range counts {
		shards[rt.m.Server(i).Addr] = c
	}
	st := PoolStats{Version: rt.m.Version(), Total: ServerStats{Shards: rt.m.Shards()}}
	started := p.started.Load() // orders the reads of s.conns after Start wrote them
	for _, s := range rt.all {
		h := healthState(s.state.Load())
		ss := ServerStats{Addr: s.addr, State: h.String(), Standing: standing(h, rt.memberStateOf(s.addr)), Shards: shards[s.addr]}
		s.mu.Lock()
		ss.MarkedDown = s.h.downs
		ss.ReturnChecks = s.returnChecks
		s.mu.Unlock()
		var conns []*bconn
		if started {
			conns = s.conns
		}
		for _, bc := range conns {
			c := &bc.ctr
			ss.Requests += c.requests.Load()
			ss.Hits += c.hits.Load()
			ss.Misses += c.misses.Load()
			ss.Errors += c.errors.Load()
			ss.Timeouts += c.timeouts.Load()
			ss.Waits += c.waits.Load()
			ss.DownRejects += c.downRejects.Load()
			ss.Reconnects += c.reconnects.Load()
			ss.Writes += c.writes.Load()
			ss.Held += c.held.Load()
		}
		st.Total.add(&ss)
		st.Servers = append(st.Servers, ss)
	}
	sort.Slice(st.Servers, func(i, j int) bool { return st.Servers[i].Addr < st.Servers[j].Addr })
	st.Moves = MoveStats{
		InFlight: rt.m.Moving(), OnLayout: rt.onLayout(),
		Fills: p.moves.fills.Load(), FillsLost: p.moves.fillsLost.Load(),
		LeaseMisses: p.moves.leaseMisses.Load(), OtherFailed: p.moves.otherFailed.Load(),
	}
	st.Replicas = ReplicaStats{
		Shards: rt.m.Replicated(), Reads: p.moves.replicaReads.Load(),
		Fills: p.moves.replicaFills.Load(), FillsLost: p.moves.replicaFillsLost.Load(),
		WriteFailed: p.moves.replicaFailed.Load(),
	}
	return st
}

func (t *ServerStats) add(s *ServerStats) {
	t.Requests += s.Requests
	t.Hits += s.Hits
	t.Misses += s.Misses
	t.Errors += s.Errors
	t.Timeouts += s.Timeouts
	t.Waits += s.Waits
	t.DownRejects += s.DownRejects
	t.Reconnects += s.Reconnects
	t.Writes += s.Writes
	t.MarkedDown += s.MarkedDown
	t.ReturnChecks += s.ReturnChecks
	t.Held += s.Held
}

// AppendStats appends the counters as memcached stats lines,
// "STAT <prefix>_<name> <value>\r\n" for the pool's totals and
// "STAT <prefix>_<addr>_<name> <value>\r\n" for each server, e.g.
// "STAT l2_10.0.0.1_11211_state up" (colons in the address become
// underscores, see appendStatAddr).
func (p *Pool) AppendStats(dst []byte, prefix string) []byte {
	st := p.Stats()
	dst = appendCounters(dst, prefix, &st.Total)
	dst = appendStat(dst, prefix, "", "servers", strconv.Itoa(len(st.Servers)))
	dst = appendStat(dst, prefix, "", "moves_in_flight", strconv.Itoa(st.Moves.InFlight))
	for _, kv := range []struct {
		name string
		v    uint64
	}{
		{"move_fills", st.Moves.Fills}, {"move_fills_lost", st.Moves.FillsLost},
		{"move_lease_misses", st.Moves.LeaseMisses}, {"move_other_failed", st.Moves.OtherFailed},
	} {
		dst = appendStat(dst, prefix, "", kv.name, strconv.FormatUint(kv.v, 10))
	}
	for i := range st.Servers {
		s := &st.Servers[i]
		dst = appendStat(dst, prefix, s.Addr, "state", s.State)
		dst = appendCounters(dst, prefix+"_"+string(appendStatAddr(nil, s.Addr)), s)
	}
	return dst
}

func appendCounters(dst []byte, prefix string, s *ServerStats) []byte {
	for _, kv := range []struct {
		name string
		v    uint64
	}{
		{"shards", uint64(s.Shards)},
		{"requests", s.Requests}, {"hits", s.Hits}, {"misses", s.Misses}, {"errors", s.Errors},
		{"timeouts", s.Timeouts}, {"waits", s.Waits}, {"down_rejects", s.DownRejects},
		{"reconnects", s.Reconnects}, {"writes", s.Writes}, {"marked_down", s.MarkedDown},
		{"return_checks", s.ReturnChecks}, {"stall_held", s.Held},
	} {
		dst = appendStat(dst, prefix, "", kv.name, strconv.FormatUint(kv.v, 10))
	}
	return dst
}

// appendStatAddr writes a server address into a STAT name with its colons
// as underscores: monitoring clients of memcached (the Prometheus
// exporter's among them) read a colon in a name as "class:field" and fail
// on anything else, which would hide every stat of the reply.
func appendStatAddr(dst []byte, addr string) []byte {
	for i := 0; i < len(addr); i++ {
		c := addr[i]
		if c == ':' {
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}

func appendStat(dst []byte, prefix, addr, name, value string) []byte {
	dst = append(dst, "STAT "...)
	dst = append(dst, prefix...)
	if addr != "" {
		dst = append(dst, '_')
		dst = appendStatAddr(dst, addr)
	}
	dst = append(dst, '_')
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = append(dst, value...)
	return append(dst, "\r\n"...)
}
