package proxy

import (
	"sync/atomic"

	"github.com/strata-cache/strata/tiers"
)

// stats holds the data plane's counters. Each event loop counts into its
// own cache-line-separated block, so counting needs no lock and no shared
// cache line; readers sum the blocks.
type stats struct {
	connsCurrent atomic.Int64
	connsTotal   atomic.Uint64
	// stallRefused counts writes answered SERVER_ERROR because they were
	// held through a process stall (stall.go); rare, so not per loop.
	stallRefused atomic.Uint64

	// blocks has one block per event loop (Config.Loops), allocated by New.
	// Sized to the loops, not to their bound: every reader (stats, the
	// admin history's sample every second, a scrape, the loop merger's
	// window) sums all blocks, and 256 blocks of some 3.6 KB each made the
	// idle history sample alone about half of an idle process's CPU.
	blocks []loopCounters
}

type loopCounters struct {
	flushes                  atomic.Uint64 // flush_all dispatched, refused or not
	metaCmds                 atomic.Uint64 // meta commands parsed (memcached's cmd_meta)
	bytesRead, bytesWritten  atomic.Uint64 // client bytes consumed and replies written
	l1Hits, l2Hits, promoted atomic.Uint64

	// byClass counts completed operations by class and status; every other
	// request counter is derived from it when read.
	byClass [numOpClasses][numStatuses]atomic.Uint64
	latency [numOpClasses][len(latencyBuckets) + 1]atomic.Uint64
	latSum  [numOpClasses]atomic.Uint64 // nanoseconds
	_       [64]byte                    // keep loops off each other's cache lines
}

// loop returns loop i's block. Loop indexes stay below Config.Loops
// (NumLoops); one past it would share the last block rather than panic.
func (s *stats) loop(i int) *loopCounters {
	if i >= len(s.blocks) {
		i = len(s.blocks) - 1
	}
	return &s.blocks[i]
}

func (s *stats) connOpened() {
	s.connsCurrent.Add(1)
	s.connsTotal.Add(1)
}

func (s *stats) connClosed() { s.connsCurrent.Add(-1) }

// observe records a completed operation's class, result and latency.
func (c *loopCounters) observe(op *tiers.Op, ns int64) {
	cl := classOf(&op.Req)
	c.byClass[cl][op.Res.Status].Add(1)
	c.latency[cl][bucketOf(ns)].Add(1)
	c.latSum[cl].Add(uint64(ns))
	if op.Res.Status == tiers.StatusHit && op.Req.Kind == tiers.KindGet && !op.Req.HasTTL {
		switch op.Res.Level {
		case 1:
			c.l1Hits.Add(1)
		case 2:
			c.l2Hits.Add(1)
		}
		if op.Res.Promoted {
			c.promoted.Add(1)
		}
	}
}

// Counters is a snapshot of the data plane's counters, summed over loops.
type Counters struct {
	ConnsCurrent                  int64
	ConnsTotal                    uint64
	Gets, GetHits, GetMisses      uint64
	L1Hits, L2Hits, Promoted      uint64
	Sets, Touches, TouchHits      uint64
	Deletes, DeleteHits           uint64
	Ariths, ArithHits             uint64
	IncrHits, IncrMisses          uint64
	DecrHits, DecrMisses          uint64
	CasHits, CasMisses, CasBadval uint64
	Flushes, Errors               uint64
	MetaCmds                      uint64
	BytesRead, BytesWritten       uint64
	// StallRefused: writes answered SERVER_ERROR because the process
	// stalled while holding them (stall.go).
	StallRefused uint64
	// AuthAttempts and AuthFailures count authentication attempts and
	// the failed ones, with [auth] on (auth_cmds, auth_errors).
	AuthAttempts, AuthFailures uint64
}

// Counters sums the per-loop counters and derives memcached's familiar ones
// from the class by status counts.
func (srv *Server) Counters() Counters {
	s := &srv.stats
	out := Counters{ConnsCurrent: s.connsCurrent.Load(), ConnsTotal: s.connsTotal.Load(), StallRefused: s.stallRefused.Load()}
	if srv.auth != nil {
		out.AuthAttempts, out.AuthFailures = srv.auth.Counts()
	}
	m := srv.classMatrix()
	for i := range s.blocks {
		b := &s.blocks[i]
		out.L1Hits += b.l1Hits.Load()
		out.L2Hits += b.l2Hits.Load()
		out.Promoted += b.promoted.Load()
		out.Flushes += b.flushes.Load()
		out.MetaCmds += b.metaCmds.Load()
		out.BytesRead += b.bytesRead.Load()
		out.BytesWritten += b.bytesWritten.Load()
	}
	total := func(c OpClass) (n uint64) {
		for _, v := range m[c] {
			n += v
		}
		return n
	}
	out.Gets = total(OpClassGet) + total(OpClassGets)
	out.GetHits = m[OpClassGet][tiers.StatusHit] + m[OpClassGets][tiers.StatusHit]
	out.GetMisses = m[OpClassGet][tiers.StatusMiss] + m[OpClassGets][tiers.StatusMiss]
	out.Touches, out.TouchHits = total(OpClassTouch), m[OpClassTouch][tiers.StatusHit]
	for _, c := range []OpClass{OpClassSet, OpClassAdd, OpClassReplace, OpClassAppend, OpClassPrepend, OpClassCas} {
		out.Sets += total(c)
	}
	out.CasHits = m[OpClassCas][tiers.StatusStored]
	out.CasBadval = m[OpClassCas][tiers.StatusExists]
	out.CasMisses = m[OpClassCas][tiers.StatusNotFound] + m[OpClassCas][tiers.StatusMiss]
	out.Deletes, out.DeleteHits = total(OpClassDelete), m[OpClassDelete][tiers.StatusStored]
	out.Ariths = total(OpClassIncr) + total(OpClassDecr)
	out.ArithHits = m[OpClassIncr][tiers.StatusStored] + m[OpClassDecr][tiers.StatusStored]
	out.IncrHits, out.IncrMisses = m[OpClassIncr][tiers.StatusStored], total(OpClassIncr)-m[OpClassIncr][tiers.StatusStored]
	out.DecrHits, out.DecrMisses = m[OpClassDecr][tiers.StatusStored], total(OpClassDecr)-m[OpClassDecr][tiers.StatusStored]
	for c := range m {
		out.Errors += m[c][tiers.StatusError]
	}
	return out
}

// classMatrix sums the class by status counts over loops.
func (srv *Server) classMatrix() (sum [numOpClasses][numStatuses]uint64) {
	s := &srv.stats
	for i := range s.blocks {
		for c := range sum {
			for st := range sum[c] {
				sum[c][st] += s.blocks[i].byClass[c][st].Load()
			}
		}
	}
	return sum
}

// ClassCount is the number of requests of one class that ended with one
// status.
type ClassCount struct {
	Op     OpClass
	Status tiers.Status
	Count  uint64
}

// RequestCounts returns the non-zero request counts by class and status.
func (srv *Server) RequestCounts() []ClassCount {
	sum := srv.classMatrix()
	var out []ClassCount
	for c := range sum {
		for st, n := range sum[c] {
			if n > 0 {
				out = append(out, ClassCount{Op: OpClass(c), Status: tiers.Status(st), Count: n})
			}
		}
	}
	return out
}

// Latency is a cumulative histogram of one class's request latencies: the
// time from parsing a request to its reply being ready.
type Latency struct {
	Op         OpClass
	Buckets    []uint64 // cumulative counts per LatencyBuckets bound
	Count      uint64
	SumSeconds float64
}

// Latencies returns a histogram per class that saw requests.
func (srv *Server) Latencies() []Latency {
	s := &srv.stats
	var out []Latency
	for c := OpClass(0); c < numOpClasses; c++ {
		var raw [len(latencyBuckets) + 1]uint64
		var sum uint64
		for i := range s.blocks {
			for b := range raw {
				raw[b] += s.blocks[i].latency[c][b].Load()
			}
			sum += s.blocks[i].latSum[c].Load()
		}
		l := Latency{Op: c, Buckets: make([]uint64, len(latencyBuckets)), SumSeconds: float64(sum) / 1e9}
		var cum uint64
		for b := range raw {
			cum += raw[b]
			if b < len(latencyBuckets) {
				l.Buckets[b] = cum
			}
		}
		l.Count = cum
		if cum > 0 {
			out = append(out, l)
		}
	}
	return out
}

// since returns the counters accumulated after base: what memcached's
// stats shows after a "stats reset". The connection gauges are never reset.
func (c Counters) since(base *Counters) Counters {
	if base == nil {
		return c
	}
	d := func(now, then uint64) uint64 {
		if now < then {
			return 0
		}
		return now - then
	}
	out := c
	out.Gets, out.GetHits, out.GetMisses = d(c.Gets, base.Gets), d(c.GetHits, base.GetHits), d(c.GetMisses, base.GetMisses)
	out.L1Hits, out.L2Hits, out.Promoted = d(c.L1Hits, base.L1Hits), d(c.L2Hits, base.L2Hits), d(c.Promoted, base.Promoted)
	out.Sets, out.Touches, out.TouchHits = d(c.Sets, base.Sets), d(c.Touches, base.Touches), d(c.TouchHits, base.TouchHits)
	out.Deletes, out.DeleteHits = d(c.Deletes, base.Deletes), d(c.DeleteHits, base.DeleteHits)
	out.Ariths, out.ArithHits = d(c.Ariths, base.Ariths), d(c.ArithHits, base.ArithHits)
	out.IncrHits, out.IncrMisses = d(c.IncrHits, base.IncrHits), d(c.IncrMisses, base.IncrMisses)
	out.DecrHits, out.DecrMisses = d(c.DecrHits, base.DecrHits), d(c.DecrMisses, base.DecrMisses)
	out.CasHits, out.CasMisses, out.CasBadval = d(c.CasHits, base.CasHits), d(c.CasMisses, base.CasMisses), d(c.CasBadval, base.CasBadval)
	out.Flushes, out.Errors, out.MetaCmds = d(c.Flushes, base.Flushes), d(c.Errors, base.Errors), d(c.MetaCmds, base.MetaCmds)
	out.BytesRead, out.BytesWritten = d(c.BytesRead, base.BytesRead), d(c.BytesWritten, base.BytesWritten)
	out.ConnsTotal = d(c.ConnsTotal, base.ConnsTotal)
	return out
}
