package poll

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceCondHolds(t *testing.T) {
	var n atomic.Int32
	Until(t, 10*time.Second, "three calls", func() bool { return n.Add(1) == 3 })
	if got := n.Load(); got != 3 {
		t.Fatalf("cond called %d times, want 3", got)
	}
}

// recorder stands in for a test so the failure path can be observed.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	// Fatalf must not return to its caller; Goexit ends the goroutine as
	// testing.T does.
	runtime.Goexit()
}

func TestUntilFailsAfterDeadline(t *testing.T) {
	r := &recorder{TB: t}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		Until(r, 30*time.Millisecond, "never", func() bool { return false })
	}()
	<-done
	if r.failed == "" {
		t.Fatal("Until returned without failing")
	}
	if el := time.Since(start); el < 30*time.Millisecond {
		t.Fatalf("failed after %v, before the deadline", el)
	}
}
