package shards

import (
	"testing"
	"time"
)

// The leader's rounds and the agent's reports fall on the grid: a period
// after a step that came on time, the step still ahead when the loop woke
// early, and at once after one that overran, then on the grid again.
func TestNextRound(t *testing.T) {
	p := 500 * time.Millisecond
	start := time.Unix(1_700_000_000, 123_456_789)
	first, wait := nextRound(start, start, p)
	if wait <= 0 || wait > p || !first.Equal(start.Add(wait)) {
		t.Fatalf("first step %v after the start (wait %v), want within a period", first.Sub(start), wait)
	}
	if next, wait := nextRound(first, first.Add(3*time.Millisecond), p); next.Sub(first) != p || wait != p-3*time.Millisecond {
		t.Errorf("after a step on time: next %v later, wait %v; want a period", next.Sub(first), wait)
	}
	early := first.Add(-100 * time.Millisecond) // woken by a kick before the step
	if next, wait := nextRound(first, early, p); !next.Equal(first) || wait != 100*time.Millisecond {
		t.Errorf("woken early: next %v, wait %v; want the same step", next.Sub(first), wait)
	}
	late := first.Add(p + 50*time.Millisecond) // the step overran the next
	next, wait := nextRound(first, late, p)
	if wait != 0 || !next.Equal(late) {
		t.Fatalf("after an overrun: wait %v, next %v; want at once", wait, next.Sub(late))
	}
	if again, wait := nextRound(next, late.Add(time.Millisecond), p); again.Sub(first) != 2*p || wait != p-50*time.Millisecond-time.Millisecond {
		t.Errorf("after the catch-up step: next %v after the first, wait %v; want back on the grid", again.Sub(first), wait)
	}
}
