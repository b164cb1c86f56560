package embedded

import (
	"testing"
	"time"
)

func TestClockFollowsWallClock(t *testing.T) {
	c := NewClock(time.Millisecond)
	defer c.Stop()
	start := time.Now().Unix()
	if got := c.Now(); got < start-1 || got > start+1 {
		t.Fatalf("clock reads %d, wall clock %d", got, start)
	}
	deadline := time.Now().Add(3 * time.Second)
	for c.Now() <= start && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // waiting for the wall clock's next second
	}
	if c.Now() <= start {
		t.Fatalf("clock did not advance past %d within 3s", start)
	}
	c.Stop()
	c.Stop() // idempotent
}
