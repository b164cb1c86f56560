package tickgrid

import (
	"fmt"
	"testing"
	"time"
)

func TestRideDue(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		last, since, period, at time.Duration
		ok                      bool
	}{
		{0, 250 * ms, time.Second, 0, false},                         // the carrier's beats between two multiples
		{0, 999 * ms, time.Second, 0, false},                         // not yet
		{0, 1000 * ms, time.Second, time.Second, true},               // on the multiple
		{0, 1003 * ms, time.Second, time.Second, true},               // the carrier woke a little after it
		{time.Second, 1250 * ms, time.Second, time.Second, false},    // ran for it already
		{time.Second, 4100 * ms, time.Second, 4 * time.Second, true}, // slept through three: runs once, for the newest
		{-time.Second, -1 * ms, time.Second, -time.Second, false},    // before the origin, still on the grid
	} {
		at, ok := due(c.last, c.since, c.period)
		if at != c.at || ok != c.ok {
			t.Errorf("due(%v, %v, %v) = %v, %v; want %v, %v", c.last, c.since, c.period, at, ok, c.at, c.ok)
		}
	}
}

// A carrier beating every 250ms runs a 1s ride and a 500ms ride on the
// beats at their multiples, in the order they were added, and a removed
// ride no more.
func TestRidesOnTheCarriersBeats(t *testing.T) {
	ms := time.Millisecond
	var r Rides
	var got []string
	at := func(d time.Duration) time.Time { return origin.Add(d) }
	var now time.Duration
	stopSlow := r.addAt(at(130*ms), time.Second, func() { got = append(got, fmt.Sprint("1s@", now)) })
	r.addAt(at(260*ms), 500*ms, func() { got = append(got, fmt.Sprint("500ms@", now)) })
	for now = 250 * ms; now <= 2250*ms; now += 250 * ms {
		if now == 1750*ms {
			stopSlow()
		}
		r.Run(at(now + 2*ms)) // a beat wakes a little after its instant
	}
	want := "[500ms@500ms 1s@1s 500ms@1s 500ms@1.5s 500ms@2s]"
	if fmt.Sprint(got) != want {
		t.Fatalf("rides %v, want %s", got, want)
	}
	if r.Len() != 1 {
		t.Fatalf("%d rides after one removal, want 1", r.Len())
	}
	stopSlow() // idempotent
}

// A carrier that wakes less often than a ride's period runs it once per
// wake-up.
func TestRideSlowerCarrier(t *testing.T) {
	var r Rides
	n := 0
	r.addAt(origin, 100*time.Millisecond, func() { n++ })
	for i := 1; i <= 4; i++ {
		r.Run(origin.Add(time.Duration(i) * time.Second))
	}
	if n != 4 {
		t.Fatalf("%d runs over four wake-ups, want 4", n)
	}
}

// Remove waits for a ride in progress: once it returns, the ride is not
// running and never runs again.
func TestRideRemoveWaitsForTheRun(t *testing.T) {
	var r Rides
	in, release := make(chan struct{}), make(chan struct{})
	runs := 0
	remove := r.addAt(origin, time.Second, func() {
		runs++
		close(in)
		<-release
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(origin.Add(time.Second))
	}()
	<-in
	removed := make(chan struct{})
	go func() {
		defer close(removed)
		remove()
	}()
	select {
	case <-removed:
		t.Fatal("remove returned while its ride ran")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-removed
	<-done
	r.Run(origin.Add(2 * time.Second))
	if runs != 1 {
		t.Fatalf("%d runs, want 1", runs)
	}
}

func TestRideNonPositivePeriodPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	var r Rides
	r.Add(0, func() {})
}
