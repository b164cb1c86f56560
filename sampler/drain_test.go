package sampler

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
)

// A sampler without a log stops its ticker once the ring is empty, and a
// record made while it sleeps still reaches the live buffer without a
// Sync: the record rouses it.
func TestAnIdleDrainerSleepsAndARecordRousesIt(t *testing.T) {
	clk := &clock{now: t0}
	s := newSampler(t, Config{Rate: 1, Window: time.Hour, Now: clk.Now, DrainInterval: time.Millisecond})
	s.Start()
	poll.Until(t, 10*time.Second, "the drainer sleeps on an empty ring", s.asleep.Load)
	s.Record(&Record{TimeUnixNano: t0.UnixNano(), Op: OpGet, Key: []byte("k1"), ValueSize: 1})
	if s.asleep.Load() {
		t.Fatal("a record left the drainer asleep")
	}
	poll.Until(t, 10*time.Second, "the record drained without a Sync", func() bool { return s.Stats().LiveRecords == 1 })
	poll.Until(t, 10*time.Second, "the drainer sleeps again", s.asleep.Load)
}

// With a log directory the ticker also rotates files by age, so the
// drainer never sleeps.
func TestADrainerWithALogDoesNotSleep(t *testing.T) {
	s := newSampler(t, Config{Rate: 1, Dir: t.TempDir()})
	if s.d.log == nil {
		t.Fatal("no log with a directory")
	}
	if s.d.sleep() || s.asleep.Load() {
		t.Fatal("a drainer with a log went to sleep")
	}
}
