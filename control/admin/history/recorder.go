package history

import (
	"sync"
	"time"
)

// Source reads the cumulative counters. It is called on the Recorder's
// Clock once per Interval and must not block.
type Source interface {
	Counters() Counters
}

// SourceFunc adapts a function to Source.
type SourceFunc func() Counters

// Counters calls f.
func (f SourceFunc) Counters() Counters { return f() }

var _ Source = SourceFunc(nil)

// Clock runs f at every multiple of period on the process's timer grid
// until the returned stop, which waits for a run in progress and is
// idempotent. f is quick and does not block. strata's clock is the stall
// heartbeat (stall.Detector.Every): it wakes an idle process on those
// instants anyway, and a sample riding on its wake-up costs no thread
// wake-up of its own.
type Clock interface {
	Every(period time.Duration, f func()) (stop func())
}

// Recorder samples a Source every Interval into a History.
type Recorder struct {
	src      Source
	interval time.Duration
	clock    Clock
	now      func() time.Time

	mu sync.Mutex // guards h
	h  *History

	// life guards stop and stopped, so that Start and Stop in any order
	// leave no sampling behind.
	life    sync.Mutex
	stop    func() // ends the clock's runs; nil before Start
	stopped bool
}

// NewRecorder returns a recorder that reads src every interval (default
// one second) on clock, with the time read from now (default time.Now).
// It starts nothing.
func NewRecorder(src Source, cfg Config, interval time.Duration, clock Clock, now func() time.Time) *Recorder {
	if clock == nil {
		panic("history: nil Clock")
	}
	if interval <= 0 {
		interval = time.Second
	}
	if now == nil {
		now = time.Now
	}
	return &Recorder{src: src, interval: interval, clock: clock, now: now, h: New(cfg)}
}

// Start reads the baseline at once, then samples on the clock. Calls
// after the first, or after Stop, do nothing.
func (r *Recorder) Start() {
	r.life.Lock()
	defer r.life.Unlock()
	if r.stop != nil || r.stopped {
		return
	}
	r.sample()
	r.stop = r.clock.Every(r.interval, r.sample)
}

func (r *Recorder) sample() { r.Add(r.now(), r.src.Counters()) }

// Add records counters read elsewhere at now, as History.Add does. The
// clock's runs call it every Interval; a test that stopped the recorder
// calls it with times of its choosing.
func (r *Recorder) Add(now time.Time, c Counters) {
	r.mu.Lock()
	r.h.Add(now, c)
	r.mu.Unlock()
}

// Stop ends the sampling, waiting for a sample in progress. It is
// idempotent and safe before Start.
func (r *Recorder) Stop() {
	r.life.Lock()
	defer r.life.Unlock()
	if r.stop != nil && !r.stopped {
		r.stop()
	}
	r.stopped = true
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
