package history

import (
	"sync"
	"time"

	"github.com/strata-cache/strata/internal/tickgrid"
)

// Source reads the cumulative counters. It is called from the Recorder's
// goroutine once per Interval and must not block for long.
type Source interface {
	Counters() Counters
}

// SourceFunc adapts a function to Source.
type SourceFunc func() Counters

// Counters calls f.
func (f SourceFunc) Counters() Counters { return f() }

var _ Source = SourceFunc(nil)

// Recorder samples a Source every Interval into a History.
type Recorder struct {
	src      Source
	interval time.Duration
	now      func() time.Time

	mu sync.Mutex // guards h
	h  *History

	startOnce, stopOnce sync.Once
	stop                chan struct{}
	done                chan struct{}
}

// NewRecorder returns a recorder that reads src every interval (default
// one second) with the clock now (default time.Now). It starts nothing.
func NewRecorder(src Source, cfg Config, interval time.Duration, now func() time.Time) *Recorder {
	if interval <= 0 {
		interval = time.Second
	}
	if now == nil {
		now = time.Now
	}
	return &Recorder{src: src, interval: interval, now: now, h: New(cfg), stop: make(chan struct{}), done: make(chan struct{})}
}

// Start reads the baseline at once, then starts the sampling goroutine.
// Calls after the first do nothing.
func (r *Recorder) Start() {
	r.startOnce.Do(func() {
		r.sample()
		go r.run()
	})
}

func (r *Recorder) run() {
	defer close(r.done)
	// On the process's timer grid, so an idle process wakes for the
	// sample together with its other periodic work.
	t := tickgrid.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.sample()
		}
	}
}

func (r *Recorder) sample() { r.Add(r.now(), r.src.Counters()) }

// Add records counters read elsewhere at now, as History.Add does. The
// sampling goroutine calls it every Interval; a test that stopped the
// recorder calls it with times of its choosing.
func (r *Recorder) Add(now time.Time, c Counters) {
	r.mu.Lock()
	r.h.Add(now, c)
	r.mu.Unlock()
}

// Stop ends the sampling goroutine and waits for it. It is idempotent and
// safe before Start.
func (r *Recorder) Stop() {
	r.stopOnce.Do(func() {
		close(r.stop)
		started := true
		// A recorder never started has no goroutine to wait for: Start is
		// made a no-op so the two cannot race into a leak.
		r.startOnce.Do(func() { started = false })
		if started {
			<-r.done
		}
	})
}

// Points returns a copy of the series, oldest first.
func (r *Recorder) Points() []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h.Points()
}

// Since returns the points newer than t (Unix milliseconds).
func (r *Recorder) Since(t int64) []Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h.Since(t)
}

// Total returns every interval since the first read folded into one.
func (r *Recorder) Total() Point {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h.Total()
}

// Last returns the newest point, if any.
func (r *Recorder) Last() (Point, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.h.Last()
}

// Interval is the sampling period.
func (r *Recorder) Interval() time.Duration { return r.interval }
