package proxy

import (
	"github.com/cespare/xxhash/v2"

	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers"
)

var (
	replyMN = []byte("MN\r\n")
	replyOK = []byte("OK\r\n")
)

// dispatch starts the work of a parsed request. Requests that strata
// answers itself get their reply now; the others go to the tier, and the
// slot becomes ready when the last of its operations completes.
func (cn *conn) dispatch(s *slot) {
	cmd := &s.cmd
	srv := cn.srv
	cn.lastCmd.Store(cn.loop.now)
	if cmd.Op.IsMeta() {
		srv.stats.loop(cn.loop.idx).metaCmds.Add(1)
	}
	switch cmd.Op {
	case protocol.OpError:
		// cmd.Reply holds the reply; a refused store may still carry the
		// delete memcached performs before refusing.
		cn.issue(s)
	case protocol.OpQuit:
		cmd.Close = true
		cn.closing = true
	case protocol.OpVersion:
		s.fixed = protocol.AppendVersion(s.fixed, protocol.MemcachedVersion)
	case protocol.OpMetaDebug:
		s.fixed = srv.appendMetaDebug(s.fixed, cmd)
	case protocol.OpAdmin:
		if string(cmd.Args[0]) == "refresh_certs" {
			cn.refreshCerts(s) // reads files: answered off the loop
			break
		}
		s.fixed = srv.appendAdmin(s.fixed, cmd)
	case protocol.OpVerbosity:
		if !cmd.NoReply {
			s.fixed = append(s.fixed, replyOK...)
		}
	case protocol.OpMetaNoop:
		s.fixed = append(s.fixed, replyMN...)
	case protocol.OpStats:
		if cmd.Binary() {
			s.fixed = cmd.AppendBinaryStats(s.fixed, srv.appendStats(nil, cmd.Args))
			break
		}
		s.fixed = srv.appendStats(s.fixed, cmd.Args)
	case protocol.OpAuth:
		cn.authAttempt(s)
	case protocol.OpFlushAll:
		srv.stats.loop(cn.loop.idx).flushes.Add(1)
		cn.issue(s)
	default:
		cn.issue(s)
	}
}

// issue sends every request of the slot to the tier.
func (cn *conn) issue(s *slot) {
	n := len(s.cmd.Reqs)
	if n == 0 {
		return
	}
	if cap(s.ops) < n {
		s.ops = make([]tiers.Op, n)
		s.res = make([]tiers.Result, n)
	}
	s.ops = s.ops[:n]
	s.res = s.res[:n]
	s.pending = n
	cn.keys += n
	s.start = cn.loop.now
	s.phase = cn.srv.phaseOf(&s.cmd)
	if s.phase != 0 && cn.inflight == nil {
		cn.inflight = cn.loop.takeCounts()
	}
	for i := range s.ops {
		op := &s.ops[i]
		op.Req = s.cmd.Reqs[i]
		op.Req.NoReply = s.cmd.NoReply
		op.Res.Reset()
		op.Loop = cn.loop.idx
		op.Conn = cn.id
		op.Done = s.onDone
		op.Ctx = s
		op.ReadUnder(s.gen)
		if s.phase != 0 {
			op.Tag = phaseBucket(op.Req.Key)
			cn.inflight[s.phase-1][op.Tag]++
			cn.inPhase[s.phase-1]++
		}
	}
	if s.refuse {
		cn.refuseHeld(s)
		return
	}
	tier := cn.srv.tier
	for i := range s.ops {
		tier.Do(&s.ops[i])
	}
}

// Ordering. A tier's Phase says which requests may not be in flight
// together on one connection (the layering: a read that misses L1 takes a
// second hop, and must not be overtaken by a later write of its key). Of
// two requests for one key, the later one waits while the earlier one of
// another phase (1 or 2) is in flight; requests of one phase, or for
// other keys, go out together. A request of tiers.PhaseExclusive waits
// for, and is waited for by, every request of its key (locality routing:
// two writes of one key may take different routes across a migration).
//
// Two plain reads of one key are the exception within a phase: the later
// waits for the earlier. memcached runs a connection's requests one after
// the other, so of two gets pipelined together the second never answers
// an older value than the first; through an ordered tier the second could
// (it hits L1's copy of the old value while the first, past L1, reads the
// new one at L2 and removes that copy only as it answers). Waiting costs
// a round trip only to a client that pipelines one key twice; the exact
// key is compared, so reads of other keys in the bucket go along.

const (
	numPhases = 3
	// phaseBuckets is how finely a connection tells keys apart for ordering:
	// two keys in one bucket are ordered as if they were one, which costs at
	// most a short wait, never correctness.
	phaseBuckets = 64
)

// phaseBucket is the ordering bucket of key.
func phaseBucket(key []byte) uint32 {
	return uint32(xxhash.Sum64(key) & (phaseBuckets - 1))
}

// mayIssue reports whether s can be issued now: none of its keys has an
// operation of the other phase in flight (flush_all, which touches every
// key, waits for every such operation), and none of its plain reads has
// an earlier plain read of the same key in flight.
func (cn *conn) mayIssue(s *slot) bool {
	ph := cn.srv.phaseOf(&s.cmd)
	if ph == 0 {
		return true
	}
	for o := range numPhases {
		if cn.inPhase[o] == 0 {
			continue // nothing in flight there
		}
		same := o == int(ph)-1 && ph != tiers.PhaseExclusive // its own phase goes along
		for i := range s.cmd.Reqs {
			r := &s.cmd.Reqs[i]
			if same {
				if r.IsRead() && cn.inflight[o][phaseBucket(r.Key)] > 0 && cn.readInFlight(s, ph, r.Key) {
					return false
				}
				continue
			}
			if r.Kind == tiers.KindFlush || cn.inflight[o][phaseBucket(r.Key)] > 0 {
				return false
			}
		}
	}
	return true
}

// readInFlight reports whether a slot of phase ph queued before s, issued
// and not yet complete, holds a plain read of key. Only a bucket with reads in flight
// gets here, and the queue holds one connection's pipeline.
func (cn *conn) readInFlight(s *slot, ph uint8, key []byte) bool {
	for _, q := range cn.queue {
		if q == s {
			return false
		}
		if q.pending == 0 || q.phase != ph {
			continue
		}
		for i := range q.cmd.Reqs {
			if r := &q.cmd.Reqs[i]; r.IsRead() && string(r.Key) == string(key) {
				return true
			}
		}
	}
	return false
}

// phaseOf is the ordering phase of a parsed command: that of its requests,
// which all share one kind; 0 when it has none, the tier needs none, or
// every tier answers within Do (nothing is ever in flight).
func (srv *Server) phaseOf(cmd *protocol.Command) uint8 {
	if !srv.async || len(cmd.Reqs) == 0 {
		return 0
	}
	return srv.tier.Phase(&cmd.Reqs[0])
}

// appendReply spells the reply of a ready slot.
func (srv *Server) appendReply(dst []byte, s *slot) []byte {
	if len(s.fixed) > 0 {
		return append(dst, s.fixed...)
	}
	if s.cmd.Op == protocol.OpError || len(s.ops) == 0 || len(s.cmd.Reqs) == 0 {
		return s.cmd.AppendReply(dst, nil)
	}
	for i := range s.ops {
		s.res[i] = s.ops[i].Res
	}
	return s.cmd.AppendReply(dst, s.res[:len(s.cmd.Reqs)])
}

func (cn *conn) countRead(n int) {
	cn.srv.stats.loop(cn.loop.idx).bytesRead.Add(uint64(n))
}

func (cn *conn) countWritten(n int) {
	cn.srv.stats.loop(cn.loop.idx).bytesWritten.Add(uint64(n))
}
