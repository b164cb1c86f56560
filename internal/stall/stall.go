package stall

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/internal/tickgrid"
)

const (
	// Threshold is the longest gap between two clock readings that is not
	// a stall. It is the shortest timeout memcached clients commonly use
	// (gomemcache's default, half a second), and well above the scheduling
	// delays of a running process: a shared two-core machine under a
	// race-detector test run starves a goroutine for a few hundred
	// milliseconds now and then, and at 250ms that read as stalls.
	Threshold = 500 * time.Millisecond
	// Period is how often the heartbeat reads the clock while the process
	// works: a tenth of the threshold, so a starved heartbeat has slack
	// before it reads as a stall.
	Period = Threshold / 10
	// IdlePeriod is its period while nobody read the generation since the
	// last reading. Any period below the threshold notices every stall
	// longer than the threshold (the gap between two readings spans the
	// stall); a longer one only leaves less slack for a starved heartbeat,
	// and a stall wrongly declared in an idle process costs little: the
	// loops hold no bytes then, and only connections opened within the
	// threshold after it have their first bytes counted as held. It saves
	// most of the heartbeat's wakeups in an idle proxy. Half the threshold
	// leaves 250ms of slack (why that is enough: doc.go), and keeps the
	// readings on the grid of the process's other periods (a multiple of
	// the placement leader's 125ms round, a divisor of 500ms, 1s and 2s),
	// so they share those wake-ups.
	IdlePeriod = Threshold / 2
)

// NextPeriod is the heartbeat's delay until its next reading: Period if
// the generation was read since the last one (the process is serving
// requests), IdlePeriod if not.
func NextPeriod(busy bool) time.Duration {
	if busy {
		return Period
	}
	return IdlePeriod
}

// ErrHeld answers a write that a stall may have made a ghost: its client
// may have given up on it before the process woke.
var ErrHeld = errors.New("request held through a process stall")

// Reading is one look at the clocks: Mono is a monotonic time in
// nanoseconds (Now), Wall the wall clock in Unix nanoseconds, 0 when not
// read.
type Reading struct {
	Mono, Wall int64
}

// Observe is the decision: whether the gap between two successive
// readings shows a stall. Either clock may show it; a wall clock that
// steps back shows nothing.
func Observe(prev, now Reading, threshold time.Duration) bool {
	if now.Mono-prev.Mono > int64(threshold) {
		return true
	}
	return prev.Wall != 0 && now.Wall != 0 && now.Wall-prev.Wall > int64(threshold)
}

// Detector holds the stall generation. Gen and Ended are safe for
// concurrent use; Beat is called by the heartbeat.
type Detector struct {
	threshold int64

	// gen is written before last under mu, so a reader that sees the
	// newest reading also sees the generation it declared.
	gen   atomic.Uint64
	last  atomic.Int64 // Mono of the newest reading, by the heartbeat or a declaring Gen
	ended atomic.Int64 // Mono when the newest stall was declared
	busy  atomic.Bool  // Gen was called since the heartbeat's last reading

	mu      sync.Mutex    // guards wall, running, users, sleep, done, changed; serializes declaring
	wall    int64         // Wall of the heartbeat's newest reading, 0 after a declaring Gen
	changed chan struct{} // closed when the generation moves, then replaced
	running bool          // a heartbeat feeds the detector
	users   int
	sleep   *tickgrid.Sleeper // the heartbeat's; closing it stops the heartbeat
	done    chan struct{}

	rides tickgrid.Rides // periodic work the heartbeat carries (Every)
}

// New returns a detector at generation 0 whose newest reading is at.
// Without a heartbeat (Beat never called, or Run not started) Gen
// declares nothing until the first Beat.
func New(threshold time.Duration, at Reading) *Detector {
	d := &Detector{threshold: int64(threshold), wall: at.Wall, changed: make(chan struct{})}
	d.last.Store(at.Mono)
	return d
}

// Gen is the stall generation as seen at now (a Mono reading). It costs
// one or two atomic loads while the heartbeat is on time; when its newest
// reading is older than the threshold, the process has stalled and the
// heartbeat has not run since, and Gen declares the stall itself.
func (d *Detector) Gen(now int64) uint64 {
	if !d.busy.Load() {
		d.busy.Store(true) // once per heartbeat period, not per call
	}
	if now-d.last.Load() > d.threshold {
		return d.declare(now)
	}
	return d.gen.Load()
}

func (d *Detector) declare(now int64) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running && now-d.last.Load() > d.threshold {
		d.noteLocked(now)
		d.wall = 0 // the heartbeat's next reading starts afresh
	}
	return d.gen.Load()
}

// noteLocked declares a stall noticed at now.
func (d *Detector) noteLocked(now int64) {
	d.gen.Add(1)
	d.ended.Store(now)
	d.last.Store(now)
	close(d.changed)
	d.changed = make(chan struct{})
}

// Changed returns a channel closed when the generation next moves, so a
// component that must pass the news on (the proxy's quiet loops) waits on
// it instead of polling Gen on a timer. Read Gen after taking the channel:
// a move between the two is then seen by one or the other.
func (d *Detector) Changed() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed
}

// Beat is one heartbeat reading; it reports whether it declared a stall.
// A reading no newer than the newest one declares nothing.
func (d *Detector) Beat(r Reading) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running = true
	prev := Reading{Mono: d.last.Load(), Wall: d.wall}
	if r.Wall != 0 {
		d.wall = r.Wall
	}
	if r.Mono <= prev.Mono && (r.Wall == 0 || prev.Wall == 0 || r.Wall <= prev.Wall) {
		return false
	}
	if Observe(prev, r, time.Duration(d.threshold)) {
		d.noteLocked(max(r.Mono, prev.Mono))
		return true
	}
	d.last.Store(max(r.Mono, prev.Mono))
	return false
}

// Ended is the Mono time at which the newest stall was declared, 0 if
// none was.
func (d *Detector) Ended() int64 { return d.ended.Load() }

// Threshold is the detector's threshold.
func (d *Detector) Threshold() time.Duration { return time.Duration(d.threshold) }

// Hold starts the heartbeat if nobody holds the detector yet, and returns
// the release; the heartbeat stops when the last holder releases. Release
// is idempotent.
func (d *Detector) Hold() (release func()) {
	d.mu.Lock()
	d.users++
	if d.users == 1 {
		d.sleep, d.done = tickgrid.NewSleeper(), make(chan struct{})
		r := read()
		d.last.Store(max(r.Mono, d.last.Load()))
		d.wall = r.Wall
		d.running = true
		go d.heartbeat(d.sleep, d.done)
	}
	d.mu.Unlock()
	var once sync.Once
	return func() { once.Do(d.release) }
}

func (d *Detector) release() {
	d.mu.Lock()
	d.users--
	if d.users > 0 {
		d.mu.Unlock()
		return
	}
	d.running = false
	sleep, done := d.sleep, d.done
	d.mu.Unlock()
	sleep.Close()
	<-done
}

// heartbeat does all of a reading's work on its own goroutine, handing
// nothing to another, so that an idle reading costs one thread wake-up:
// the sleeper waits in the network poller, not on a runtime timer (why
// that matters: tickgrid.Sleeper), and Beat makes no system call. On the
// process's timer grid, the readings share their wake-ups with the other
// periodic work; the gap between two is at most the period.
func (d *Detector) heartbeat(sleep *tickgrid.Sleeper, done chan struct{}) {
	defer close(done)
	for sleep.Sleep(NextPeriod(d.busy.Swap(false))) {
		t := time.Now()
		d.Beat(readingAt(t))
		d.rides.Run(t)
	}
}

// Every has the heartbeat run f at every multiple of period on the
// process's timer grid (at the first reading at or after it), until the
// returned stop; it holds the detector meanwhile, so the heartbeat runs
// for f even with nobody else holding it.
//
// It is for periodic work that would otherwise wake an idle process on a
// goroutine of its own, at instants the heartbeat already wakes for
// (tickgrid.Rides says why that costs a thread wake-up): the history
// sample of the page. f runs on the heartbeat's goroutine after its
// reading, so it must be quick and must not block: the next reading waits
// for it. A period that is no multiple of the heartbeat's (250ms idle,
// 50ms busy) runs at the first reading after each multiple. Stop waits
// for a run in progress, is idempotent, and must not be called from f.
func (d *Detector) Every(period time.Duration, f func()) (stop func()) {
	remove := d.rides.Add(period, f)
	release := d.Hold()
	// Both are idempotent, and remove waits out a run in progress.
	return func() { remove(); release() }
}

// base anchors Now.
var base = time.Now()

// Now is the monotonic clock the detector reads, in nanoseconds.
func Now() int64 { return int64(time.Since(base)) }

func read() Reading { return readingAt(time.Now()) }

// readingAt is the reading of the time t.
func readingAt(t time.Time) Reading {
	return Reading{Mono: int64(t.Sub(base)), Wall: t.UnixNano()}
}

var process = New(Threshold, read())

// Process is the detector of this process: every component that holds
// requests reads the same generation.
func Process() *Detector { return process }
