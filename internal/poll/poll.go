package poll

import (
	"testing"
	"time"
)

// Interval is how often Until checks its condition: short enough that a test
// waits little past the moment the condition comes to hold, long enough not
// to starve the goroutines that must make it hold.
const Interval = 5 * time.Millisecond

// Until calls cond every Interval until it returns true, and fails t with
// what if it has not within the given duration. cond is checked once more at
// the deadline, so a condition that holds then passes.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		<-tick.C
	}
}
