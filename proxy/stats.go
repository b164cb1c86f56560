package proxy

import (
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers"
)

// maxLoops bounds the per-loop counter array; loops past it share the last.
const maxLoops = 256

// stats holds the data plane's counters. Each event loop counts into its
// own cache-line-separated block, so counting needs no lock and no shared
// cache line; readers sum the blocks.
type stats struct {
	connsCurrent atomic.Int64
	connsTotal   atomic.Uint64

	blocks []loopCounters // maxLoops blocks, allocated by New
}

type loopCounters struct {
	flushes                  atomic.Uint64 // flush_all dispatched, refused or not
	l1Hits, l2Hits, promoted atomic.Uint64

	// byClass counts completed operations by class and status; every other
	// request counter is derived from it when read.
	byClass [numOpClasses][numStatuses]atomic.Uint64
	latency [numOpClasses][len(latencyBuckets) + 1]atomic.Uint64
	latSum  [numOpClasses]atomic.Uint64 // nanoseconds
	_       [64]byte                    // keep loops off each other's cache lines
}

func (s *stats) loop(i int) *loopCounters {
	if i >= maxLoops {
		i = maxLoops - 1
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
	CasHits, CasMisses, CasBadval uint64
	Flushes, Errors               uint64
}

// Counters sums the per-loop counters and derives memcached's familiar ones
// from the class by status counts.
func (srv *Server) Counters() Counters {
	s := &srv.stats
	out := Counters{ConnsCurrent: s.connsCurrent.Load(), ConnsTotal: s.connsTotal.Load()}
	m := srv.classMatrix()
	for i := range s.blocks {
		b := &s.blocks[i]
		out.L1Hits += b.l1Hits.Load()
		out.L2Hits += b.l2Hits.Load()
		out.Promoted += b.promoted.Load()
		out.Flushes += b.flushes.Load()
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

// statsSections are the stats subcommands strata answers; for these the
// WithStats function adds its lines. Any other subcommand gets ERROR, as
// memcached answers a subcommand it does not know.
var statsSections = map[string]bool{"sampler": true, "tiers": true, "hotkeys": true}

// appendStats spells the stats command's reply in memcached's format:
// memcached's general fields first, then whatever the tiers add, then END.
func (srv *Server) appendStats(dst []byte, args [][]byte) []byte {
	if len(args) > 0 && !statsSections[string(args[0])] {
		return append(dst, "ERROR\r\n"...)
	}
	if len(args) == 0 {
		c := srv.Counters()
		now := time.Now()
		dst = protocol.AppendStatUint(dst, "pid", uint64(os.Getpid()))
		dst = protocol.AppendStatUint(dst, "uptime", uint64(now.Sub(srv.started)/time.Second))
		dst = protocol.AppendStatUint(dst, "time", uint64(now.Unix()))
		dst = protocol.AppendStatString(dst, "version", srv.cfg.Version)
		dst = protocol.AppendStatUint(dst, "pointer_size", strconv.IntSize)
		dst = protocol.AppendStatUint(dst, "curr_connections", uint64(c.ConnsCurrent))
		dst = protocol.AppendStatUint(dst, "total_connections", c.ConnsTotal)
		dst = protocol.AppendStatUint(dst, "threads", uint64(srv.cfg.Loops))
		dst = protocol.AppendStatUint(dst, "cmd_get", c.Gets)
		dst = protocol.AppendStatUint(dst, "cmd_set", c.Sets)
		dst = protocol.AppendStatUint(dst, "cmd_flush", c.Flushes)
		dst = protocol.AppendStatUint(dst, "cmd_touch", c.Touches)
		dst = protocol.AppendStatUint(dst, "get_hits", c.GetHits)
		dst = protocol.AppendStatUint(dst, "get_misses", c.GetMisses)
		dst = protocol.AppendStatUint(dst, "delete_hits", c.DeleteHits)
		dst = protocol.AppendStatUint(dst, "delete_misses", c.Deletes-c.DeleteHits)
		dst = protocol.AppendStatUint(dst, "incr_decr_hits", c.ArithHits)
		dst = protocol.AppendStatUint(dst, "incr_decr_misses", c.Ariths-c.ArithHits)
		dst = protocol.AppendStatUint(dst, "cas_hits", c.CasHits)
		dst = protocol.AppendStatUint(dst, "cas_misses", c.CasMisses)
		dst = protocol.AppendStatUint(dst, "cas_badval", c.CasBadval)
		dst = protocol.AppendStatUint(dst, "touch_hits", c.TouchHits)
		dst = protocol.AppendStatUint(dst, "touch_misses", c.Touches-c.TouchHits)
		dst = protocol.AppendStatUint(dst, "strata_l1_hits", c.L1Hits)
		dst = protocol.AppendStatUint(dst, "strata_l2_hits", c.L2Hits)
		dst = protocol.AppendStatUint(dst, "strata_promoted", c.Promoted)
		dst = protocol.AppendStatUint(dst, "strata_tier_errors", c.Errors)
	}
	if srv.opts.statsFunc != nil {
		dst = srv.opts.statsFunc(dst, args)
	}
	return append(dst, "END\r\n"...)
}
