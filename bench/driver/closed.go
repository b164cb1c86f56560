package driver

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/strata-cache/strata/bench/workload"
)

// fill is a pending read-through set: a read missed, so the client writes
// the key back, as an application in front of a database would.
type fill struct {
	family int
	id     uint64
	size   int
	ttl    int64
}

// fillQueueCap bounds pending fills per connection; past it fills are
// dropped and counted.
const fillQueueCap = 4096

// worker is one connection's load loop and its tallies. Its fields are owned
// by the goroutine running it; answered is read by the progress reporter.
type worker struct {
	cfg      *Config
	w        *workload.Workload
	gen      *workload.Generator
	c        *conn
	cnt      counters
	hist     *hdrhistogram.Histogram
	lag      *hdrhistogram.Histogram // open loop: how late the sender wrote each batch; the sender's
	fills    []fill                  // pending fills; fills[fillHead:] are still to send
	fillHead int
	answered atomic.Int64
}

func newWorker(cfg *Config, i int) *worker {
	return &worker{
		cfg:  cfg,
		w:    cfg.Workload,
		gen:  cfg.Workload.Generator(cfg.Stream+uint64(i), i%cfg.Workload.Clusters()),
		hist: newHist(),
		lag:  newHist(),
	}
}

// next fills r with the next request: a pending fill first, else a fresh draw.
func (k *worker) next(r *workload.Request) {
	if k.fillHead == len(k.fills) {
		k.gen.Next(r)
		return
	}
	f := k.fills[k.fillHead]
	k.fillHead++
	if k.fillHead == len(k.fills) {
		k.fills, k.fillHead = k.fills[:0], 0
	}
	r.Op, r.Family, r.KeyID, r.ValueSize, r.TTL = workload.OpSet, f.family, f.id, f.size, f.ttl
	r.Cluster = k.gen.Cluster()
	r.Key = k.w.AppendKey(r.Key[:0], f.family, f.id)
	k.cnt.fills++
}

// noteReply counts a reply and queues a fill for a read miss.
func (k *worker) noteReply(r *workload.Request, out outcome, info replyInfo) {
	k.cnt.count(r, out, info)
	if out == outMiss && k.w.Profile().FillOnMiss {
		if len(k.fills)-k.fillHead >= fillQueueCap {
			k.cnt.fillsLost++
			return
		}
		k.fills = append(k.fills, fill{family: r.Family, id: r.KeyID, size: r.ValueSize, ttl: r.TTL})
	}
}

// runClosed is the closed loop: write up to Pipeline requests in one write,
// read as many replies, repeat until the deadline, the budget or ctx ends
// it. Each request's latency runs from just before its batch was written to
// the moment its reply was parsed.
func (k *worker) runClosed(ctx context.Context, deadline time.Time, b *budget) {
	depth := k.cfg.Pipeline
	reqs := make([]workload.Request, depth)
	var wbuf []byte
	for ctx.Err() == nil {
		now := time.Now()
		if !now.Before(deadline) {
			return
		}
		if k.c == nil && !k.redial(ctx, deadline) {
			return
		}
		n := b.claim(depth)
		if n == 0 {
			return
		}
		wbuf = wbuf[:0]
		for i := 0; i < n; i++ {
			k.next(&reqs[i])
			wbuf = appendRequest(wbuf, &reqs[i])
		}
		k.c.refreshDeadline(now)
		t0 := time.Now()
		if _, err := k.c.nc.Write(wbuf); err != nil {
			k.broken(fmt.Errorf("write: %w", err), n)
			continue
		}
		for i := 0; i < n; i++ {
			out, info, err := readReply(k.c.br, &reqs[i])
			if err != nil {
				k.broken(fmt.Errorf("read: %w", err), n-i)
				break
			}
			record(k.hist, time.Since(t0))
			k.noteReply(&reqs[i], out, info)
			k.answered.Add(1)
		}
	}
}

// broken records a failed connection and the requests it took with it.
func (k *worker) broken(err error, lost int) {
	k.cnt.lost += int64(lost)
	k.cnt.fail(err)
	if k.c != nil {
		k.c.close()
		k.c = nil
	}
}

// redial reconnects after a failure, with a short backoff, while the run is
// live. It reports whether the worker has a connection again.
func (k *worker) redial(ctx context.Context, deadline time.Time) bool {
	backoff := 50 * time.Millisecond
	for attempt := 0; attempt < 4; attempt++ {
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return false
		}
		c, err := dial(k.cfg)
		if err == nil {
			k.c = c
			k.cnt.redials++
			return true
		}
		k.cnt.fail(err)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		backoff *= 2
	}
	return false
}
