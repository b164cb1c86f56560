package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-cache/strata/bench/workload"
	"github.com/strata-cache/strata/internal/tickgrid"
)

// pending is a request the sender has scheduled and the receiver has yet to
// see answered. intended is the scheduled send time, in nanoseconds since the
// run started.
type pending struct {
	intended int64
	op       workload.Op
	family   int
	id       uint64
	size     int
	ttl      int64
}

// schedule is one connection's share of the open-loop timetable. Request j
// of connection i (of C) is due at (i + j·C) / Rate seconds after the start:
// the connections interleave into one evenly spaced stream of Rate per
// second. It is pure arithmetic so it is tested without a clock.
type schedule struct {
	offset   float64 // ns
	interval float64 // ns
}

func newSchedule(conn, conns int, rate float64) schedule {
	return schedule{offset: float64(conn) * 1e9 / rate, interval: float64(conns) * 1e9 / rate}
}

// at is the due time of request j.
func (s schedule) at(j int64) int64 { return int64(s.offset + float64(j)*s.interval) }

// dueBy is how many requests are due by time t (ns): those with at(j) ≤ t.
func (s schedule) dueBy(t int64) int64 {
	if float64(t) < s.offset {
		return 0
	}
	n := int64((float64(t)-s.offset)/s.interval) + 1
	for n > 0 && s.at(n-1) > t { // guard float rounding at the boundary
		n--
	}
	for s.at(n) <= t {
		n++
	}
	return n
}

// runOpen is the open loop for one connection. The calling goroutine sends
// on the schedule (pace.go), and records how late it sent each batch; a receiver goroutine it starts and waits for parses the
// replies. limit (0 = none) is this connection's share of the request count.
// A connection that fails ends this connection's part of the run: every
// request in flight on it is counted lost.
func (k *worker) runOpen(ctx context.Context, start time.Time, sched schedule, limit int64) {
	inflight := make(chan pending, k.cfg.MaxInFlight)
	fills := make(chan fill, fillQueueCap)
	recvDone := make(chan struct{})
	go func() {
		defer close(recvDone)
		k.receive(start, inflight, fills)
	}()

	var (
		req      workload.Request
		wbuf     []byte
		sent     int64
		sendFill int64
		timer    = time.NewTimer(time.Hour)
		duration = k.cfg.Duration.Nanoseconds()
	)
	timer.Stop()
	pace := tickgrid.NewSleeper() // precise where the platform allows (pace.go)
	defer pace.Close()
	defer func() {
		close(inflight)
		if ctx.Err() != nil {
			k.c.setReadDeadline(time.Now())
		} else {
			k.c.setReadDeadline(time.Now().Add(k.cfg.IOTimeout))
		}
		<-recvDone
		k.cnt.fills += sendFill // the receiver has finished with cnt
	}()
	for ctx.Err() == nil {
		now := time.Since(start).Nanoseconds()
		if now >= duration || (limit > 0 && sent >= limit) {
			return
		}
		due := sched.dueBy(now) - sent
		if due <= 0 {
			coarse, precise := waitPlan(time.Duration(sched.at(sent) - now))
			if precise > 0 {
				pace.SleepFor(precise)
				continue
			}
			timer.Reset(coarse)
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			continue
		}
		n := min(due, int64(k.cfg.Pipeline))
		if limit > 0 {
			n = min(n, limit-sent)
		}
		wbuf = wbuf[:0]
		for i := int64(0); i < n; i++ {
			select {
			case f := <-fills:
				req.Op, req.Family, req.KeyID, req.ValueSize, req.TTL = workload.OpSet, f.family, f.id, f.size, f.ttl
				req.Key = k.w.AppendKey(req.Key[:0], f.family, f.id)
				sendFill++
			default:
				k.gen.Next(&req)
			}
			p := pending{intended: sched.at(sent + i), op: req.Op, family: req.Family, id: req.KeyID, size: req.ValueSize, ttl: req.TTL}
			select {
			case inflight <- p: // blocks at MaxInFlight; the wait shows in latency
			case <-ctx.Done():
				return
			}
			wbuf = appendRequest(wbuf, &req)
		}
		record(k.lag, time.Since(start)-time.Duration(sched.at(sent)))
		sent += n
		k.c.refreshDeadline(time.Now())
		if _, err := k.c.nc.Write(wbuf); err != nil {
			// The receiver sees the broken connection too and counts what
			// is in flight as lost.
			return
		}
	}
}

// receive parses replies in order, records latency from each request's
// scheduled time, and offers read-through fills back to the sender. On a
// connection failure it closes the connection (so the sender stops) and
// drains the queue, counting each request lost.
func (k *worker) receive(start time.Time, inflight <-chan pending, fills chan<- fill) {
	var req workload.Request
	fillOnMiss := k.w.Profile().FillOnMiss
	for p := range inflight {
		req.Op, req.Family, req.KeyID, req.ValueSize, req.TTL = p.op, p.family, p.id, p.size, p.ttl
		req.Key = k.w.AppendKey(req.Key[:0], p.family, p.id)
		out, info, err := readReply(k.c.br, &req)
		if err != nil {
			k.cnt.fail(fmt.Errorf("read: %w", err))
			k.cnt.lost++
			k.c.close()
			for range inflight {
				k.cnt.lost++
			}
			return
		}
		record(k.hist, time.Since(start)-time.Duration(p.intended))
		k.cnt.count(&req, out, info)
		k.answered.Add(1)
		if out == outMiss && fillOnMiss {
			select {
			case fills <- fill{family: p.family, id: p.id, size: p.size, ttl: p.ttl}:
			default:
				k.cnt.fillsLost++
			}
		}
	}
}
