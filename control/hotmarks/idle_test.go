package hotmarks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/hotmarks"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

// pulls records, for every Next of the watches it opens, whether its
// context had a deadline.
type pulls struct {
	*store.MemoryClient
	mu        sync.Mutex // guards deadlines
	deadlines []bool
}

func (p *pulls) Watch(prefix string, fromRev int64) store.Watch {
	return &pulledWatch{Watch: p.MemoryClient.Watch(prefix, fromRev), p: p}
}

func (p *pulls) record() []bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]bool(nil), p.deadlines...)
}

type pulledWatch struct {
	store.Watch
	p *pulls
}

func (w *pulledWatch) Next(ctx context.Context) (store.Batch, error) {
	_, ok := ctx.Deadline()
	w.p.mu.Lock()
	w.p.deadlines = append(w.p.deadlines, ok)
	w.p.mu.Unlock()
	return w.Watch.Next(ctx)
}

// With nothing buffered the goroutine waits on the watch with no
// deadline, so an idle strata's marks never wake it; the first mark ends
// that wait and is written within the interval.
func TestIdleWaitsWithoutATimer(t *testing.T) {
	f := newFleet()
	c := f.m.Connect()
	t.Cleanup(func() { _ = c.Close() })
	p := &pulls{MemoryClient: c}
	s, err := hotmarks.New(p, hotmarks.Config{Hold: hold, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.Start()
	// The first Next returns the watch's snapshot; the second waits.
	poll.Until(t, wait, "the watch pulled twice", func() bool { return len(p.record()) >= 2 })
	if got := p.record(); got[0] || got[1] {
		t.Fatalf("pulls with a deadline while nothing was buffered: %v", got)
	}
	now := f.clock.nanos()
	m := counter("votes:1", now, now)
	s.Publish([]hotkeys.Mark{m})
	waitMarks(t, s, []hotkeys.Mark{m})
	got := p.record()
	if len(got) < 3 || !got[2] {
		t.Fatalf("pulls %v: want the one after the first mark with the write's deadline", got)
	}
}
