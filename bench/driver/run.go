package driver

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/strata-cache/strata/bench/workload"
)

// Run drives cfg.Workload at cfg.Target and returns the merged result. It
// dials every connection first (a target that cannot be reached is an
// error, not a run full of errors), prefills when the profile asks for it,
// then runs the closed or open loop until the duration, the request count or
// ctx ends it. Failures during the run are counted in the Result, not
// returned. Every goroutine Run starts has ended when it returns.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	workers := make([]*worker, cfg.Conns)
	defer func() {
		for _, k := range workers {
			if k != nil && k.c != nil {
				k.c.close()
			}
		}
	}()
	for i := range workers {
		k := newWorker(&cfg, i)
		c, err := dial(&cfg)
		if err != nil {
			return nil, err
		}
		k.c = c
		workers[i] = k
	}
	if cfg.Workload.Profile().Prefill {
		if err := prefill(ctx, &cfg, workers); err != nil {
			return nil, err
		}
	}

	if cfg.Started != nil {
		cfg.Started()
	}
	start := time.Now()
	deadline := start.Add(cfg.Duration)
	stopProgress := startProgress(cfg.Progress, start, cfg.Duration, workers)
	var wg sync.WaitGroup
	shared := &budget{limit: cfg.Requests}
	for i, k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cfg.Rate > 0 {
				limit := int64(0)
				if cfg.Requests > 0 {
					limit = cfg.Requests / int64(cfg.Conns)
					if int64(i) < cfg.Requests%int64(cfg.Conns) {
						limit++
					}
					if limit == 0 {
						return
					}
				}
				k.runOpen(ctx, start, newSchedule(i, cfg.Conns, cfg.Rate), limit)
				return
			}
			k.runClosed(ctx, deadline, shared)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()

	var total counters
	hist, lag := newHist(), newHist()
	for _, k := range workers {
		total.add(&k.cnt)
		hist.Merge(k.hist)
		lag.Merge(k.lag)
	}
	r := newResult(&cfg, &total, hist, elapsed)
	if cfg.Rate > 0 {
		r.SendLag = summarize(lag)
	}
	return r, nil
}

// prefill sets every key of the workload once, over the given workers'
// connections, pipelining 64 sets at a time. It is not measured. Any reply
// other than STORED is an error: a benchmark that means to measure hits
// must not start from a half-filled cache.
func prefill(ctx context.Context, cfg *Config, workers []*worker) error {
	w := cfg.Workload
	var total uint64
	for f := 0; f < w.Families(); f++ {
		total += w.KeyCount(f)
	}
	if total > cfg.PrefillLimit {
		return fmt.Errorf("prefill: %d keys exceed the limit of %d; use fill_on_miss instead", total, cfg.PrefillLimit)
	}
	errs := make([]error, len(workers))
	var wg sync.WaitGroup
	for i, k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = k.prefillPart(ctx, i, len(workers))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("prefill: %w", err)
		}
	}
	return nil
}

// prefillPart sets the keys whose position in the enumeration is ≡ part mod parts.
func (k *worker) prefillPart(ctx context.Context, part, parts int) error {
	const depth = 64
	reqs := make([]workload.Request, depth)
	var wbuf []byte
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		k.c.refreshDeadline(time.Now())
		if _, err := k.c.nc.Write(wbuf); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			out, info, err := readReply(k.c.br, &reqs[i])
			if err != nil {
				return err
			}
			if out != outStored {
				return fmt.Errorf("set %s: %v %s", reqs[i].Key, out, info.errLine)
			}
		}
		n, wbuf = 0, wbuf[:0]
		return ctx.Err()
	}
	var pos uint64
	for f := 0; f < k.w.Families(); f++ {
		for id := uint64(0); id < k.w.KeyCount(f); id, pos = id+1, pos+1 {
			if pos%uint64(parts) != uint64(part) {
				continue
			}
			r := &reqs[n]
			r.Op, r.Family, r.KeyID = workload.OpSet, f, id
			r.ValueSize, r.TTL = k.w.ValueSize(f, id), k.w.TTL(f, id)
			r.Key = k.w.AppendKey(r.Key[:0], f, id)
			wbuf = appendRequest(wbuf, r)
			if n++; n == depth {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// startProgress prints a status line every second once the run is two
// seconds old, so short runs stay quiet. The returned function stops it,
// ends the line, and waits for the goroutine.
func startProgress(out io.Writer, start time.Time, limit time.Duration, workers []*worker) (stop func()) {
	if out == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	printed := false
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var last int64
		lastAt := start
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				var n int64
				for _, k := range workers {
					n += k.answered.Load()
				}
				rate := float64(n-last) / now.Sub(lastAt).Seconds()
				last, lastAt = n, now
				el := now.Sub(start)
				if el < 2*time.Second {
					continue
				}
				bound := ""
				if limit < MaxDuration {
					bound = "/" + limit.Round(time.Second).String()
				}
				fmt.Fprintf(out, "\r  %s%s  %d requests  %.0f ops/s   ", el.Round(time.Second), bound, n, rate)
				printed = true
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		if printed {
			fmt.Fprint(out, "\n")
		}
	}
}
