package stall

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
)

const ms = int64(time.Millisecond)

func TestObserveIsAGapLongerThanTheThreshold(t *testing.T) {
	th := 250 * time.Millisecond
	for _, c := range []struct {
		name      string
		prev, now Reading
		stalled   bool
	}{
		{"on time", Reading{0, 0}, Reading{25 * ms, 0}, false},
		{"exactly the threshold", Reading{0, 0}, Reading{250 * ms, 0}, false},
		{"one past it", Reading{0, 0}, Reading{250*ms + 1, 0}, true},
		{"monotonic stopped, wall moved", Reading{10 * ms, 1000 * ms}, Reading{11 * ms, 2000 * ms}, true},
		{"wall stepped back", Reading{10 * ms, 5000 * ms}, Reading{20 * ms, 1000 * ms}, false},
		{"wall unknown before", Reading{10 * ms, 0}, Reading{20 * ms, 9000 * ms}, false},
	} {
		if got := Observe(c.prev, c.now, th); got != c.stalled {
			t.Errorf("%s: Observe = %v, want %v", c.name, got, c.stalled)
		}
	}
}

func TestTheHeartbeatDeclaresEachStallOnce(t *testing.T) {
	d := New(250*time.Millisecond, Reading{Mono: 0, Wall: 1000 * ms})
	steps := []struct {
		at      Reading
		stalled bool
		gen     uint64
	}{
		{Reading{25 * ms, 1025 * ms}, false, 0},
		{Reading{50 * ms, 1050 * ms}, false, 0},
		{Reading{3050 * ms, 4050 * ms}, true, 1}, // stopped for 3 s
		{Reading{3075 * ms, 4075 * ms}, false, 1},
		{Reading{3075 * ms, 4075 * ms}, false, 1}, // the same reading again
		{Reading{3100 * ms, 9100 * ms}, true, 2},  // monotonic ran 25 ms, wall 5 s: a paused VM
		{Reading{3125 * ms, 9125 * ms}, false, 2},
	}
	for i, s := range steps {
		if got := d.Beat(s.at); got != s.stalled {
			t.Fatalf("beat %d at %v: stalled %v, want %v", i, s.at, got, s.stalled)
		}
		if g := d.Gen(s.at.Mono); g != s.gen {
			t.Fatalf("beat %d: gen %d, want %d", i, g, s.gen)
		}
	}
	if e := d.Ended(); e != 3100*ms {
		t.Fatalf("Ended = %d, want %d", e, 3100*ms)
	}
}

// After SIGCONT the event loops may run before the heartbeat: the request
// path declares the stall from the heartbeat's late reading, and the
// heartbeat's own late reading then declares nothing more.
func TestTheRequestPathDeclaresAStallTheHeartbeatHasNotSeen(t *testing.T) {
	d := New(250*time.Millisecond, Reading{Mono: 0, Wall: 1000 * ms})
	d.Beat(Reading{25 * ms, 1025 * ms})
	if g := d.Gen(200 * ms); g != 0 {
		t.Fatalf("gen %d within the threshold, want 0", g)
	}
	if g := d.Gen(275 * ms); g != 0 {
		t.Fatalf("gen %d at exactly the threshold, want 0", g)
	}
	if g := d.Gen(2000 * ms); g != 1 {
		t.Fatalf("gen %d after a 2 s gap, want 1", g)
	}
	if g := d.Gen(2001 * ms); g != 1 {
		t.Fatalf("gen %d read again, want 1 (declared once)", g)
	}
	if d.Beat(Reading{2000 * ms, 2975 * ms}) {
		t.Fatal("the heartbeat declared a stall the request path had declared")
	}
	if d.Beat(Reading{2025 * ms, 3000 * ms}) {
		t.Fatal("the beat after it declared a stall")
	}
	if g, e := d.Gen(2030*ms), d.Ended(); g != 1 || e != 2000*ms {
		t.Fatalf("gen %d ended %d, want 1 and %d", g, e, 2000*ms)
	}
}

func TestWithoutAHeartbeatGenDeclaresNothing(t *testing.T) {
	d := New(250*time.Millisecond, Reading{})
	if g := d.Gen(int64(time.Hour)); g != 0 {
		t.Fatalf("gen %d with no heartbeat, want 0", g)
	}
}

func TestHoldRunsTheHeartbeatUntilTheLastRelease(t *testing.T) {
	d := New(Threshold, read())
	r1 := d.Hold()
	r2 := d.Hold()
	r1()
	r1() // idempotent
	if !heartbeatRunning(d) {
		t.Fatal("heartbeat stopped while still held")
	}
	r2()
	if heartbeatRunning(d) {
		t.Fatal("heartbeat still running after the last release")
	}
	if g := d.Gen(Now() + int64(time.Hour)); g != 0 {
		t.Fatalf("gen %d after release, want 0", g)
	}
}

// A held heartbeat keeps reading the clock, reading after reading, at the
// idle period (nobody reads the generation here), so the request path
// declares nothing.
func TestTheHeldHeartbeatKeepsReading(t *testing.T) {
	d := New(Threshold, read())
	release := d.Hold()
	prev, n := d.last.Load(), 0
	poll.Until(t, 10*time.Second, "two heartbeat readings", func() bool {
		if l := d.last.Load(); l > prev {
			prev, n = l, n+1
		}
		return n >= 2
	})
	if d.Gen(Now()) != 0 {
		t.Fatal("a heartbeat on time declared a stall")
	}
	release() // waits for the heartbeat; tickgrid's tests show Close wakes its sleep
}

// The proxy passes a stall on to its quiet loops by waiting on Changed
// rather than polling Gen: the channel must close on every move, whoever
// declared it, and stay open while nothing moves.
func TestChangedClosesOnEachNewGeneration(t *testing.T) {
	d := New(250*time.Millisecond, Reading{Mono: 0, Wall: 1000 * ms})
	ch := d.Changed()
	d.Beat(Reading{25 * ms, 1025 * ms})
	select {
	case <-ch:
		t.Fatal("Changed closed on a beat on time")
	default:
	}
	d.Beat(Reading{1000 * ms, 2000 * ms}) // the heartbeat declares
	select {
	case <-ch:
	default:
		t.Fatal("Changed still open after the heartbeat declared a stall")
	}
	ch = d.Changed()
	if g := d.Gen(3000 * ms); g != 2 { // the request path declares
		t.Fatalf("gen %d, want 2", g)
	}
	select {
	case <-ch:
	default:
		t.Fatal("Changed still open after Gen declared a stall")
	}
	select {
	case <-d.Changed():
		t.Fatal("the next Changed is already closed")
	default:
	}
}

// The heartbeat slows to IdlePeriod while nobody reads the generation and
// returns to Period once someone does; at either period a gap of one
// period is no stall and a gap just over the threshold is one.
func TestTheHeartbeatSlowsWhileNobodyReadsTheGeneration(t *testing.T) {
	if IdlePeriod >= Threshold || Period >= IdlePeriod {
		t.Fatalf("periods %v and %v against threshold %v", Period, IdlePeriod, Threshold)
	}
	d := New(Threshold, Reading{Mono: 1})
	if d.busy.Swap(false) {
		t.Fatal("a new detector reads as busy")
	}
	if NextPeriod(d.busy.Swap(false)) != IdlePeriod {
		t.Fatal("idle detector not on IdlePeriod")
	}
	d.Gen(2)
	if NextPeriod(d.busy.Swap(false)) != Period {
		t.Fatal("a read generation did not bring the heartbeat back to Period")
	}
	if NextPeriod(d.busy.Swap(false)) != IdlePeriod {
		t.Fatal("busy outlived the reading after it")
	}
	at := int64(1)
	for _, p := range []time.Duration{IdlePeriod, Period, IdlePeriod} {
		at += int64(p)
		if d.Beat(Reading{Mono: at}) {
			t.Fatalf("a gap of %v declared a stall", p)
		}
	}
	if !d.Beat(Reading{Mono: at + int64(Threshold) + 1}) {
		t.Fatal("a gap just over the threshold declared nothing")
	}
}

// The idle period sits on the grid of the process's other periodic work
// (internal/tickgrid): a multiple of the placement leader's default 125ms
// round and a divisor of 500ms, 1s and 2s, so an idle heartbeat reading
// falls on the same wake-ups as theirs instead of adding its own.
func TestTheIdlePeriodSharesTheProcessTimerGrid(t *testing.T) {
	const round = 125 * time.Millisecond // placesvc.DefaultTick; this low-level test does not import the control plane
	if IdlePeriod%round != 0 {
		t.Errorf("IdlePeriod %v is not a multiple of %v", IdlePeriod, round)
	}
	for _, p := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
		if p%IdlePeriod != 0 {
			t.Errorf("IdlePeriod %v does not divide %v", IdlePeriod, p)
		}
	}
}

// Every runs its work on the heartbeat, which it holds meanwhile, and
// once stopped runs it no more and lets the heartbeat stop.
func TestEveryRidesTheHeartbeatItHolds(t *testing.T) {
	d := New(Threshold, read())
	var runs atomic.Int64
	stop := d.Every(IdlePeriod, func() { runs.Add(1) })
	poll.Until(t, 10*time.Second, "two runs on the heartbeat", func() bool { return runs.Load() >= 2 })
	if !heartbeatRunning(d) {
		t.Fatal("no heartbeat while a ride is on")
	}
	stop()
	stop() // idempotent
	if heartbeatRunning(d) {
		t.Fatal("heartbeat still running after the only ride stopped")
	}
	if n := d.rides.Len(); n != 0 {
		t.Fatalf("%d rides after stop, want 0", n)
	}
}

func heartbeatRunning(d *Detector) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.running
}
