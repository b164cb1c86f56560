package hotmarks_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/hotmarks"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

// wait bounds every poll: generous, the machine is shared.
const wait = 20 * time.Second

// clock is the memory store's lease clock and the marks' clock.
type clock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) nanos() int64 { return c.Now().UnixNano() }

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fleet is one memory store and its clock; each strata is a client.
type fleet struct {
	clock *clock
	m     *store.Memory
}

func newFleet() *fleet {
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	return &fleet{clock: c, m: store.NewMemory(store.MemoryOptions{Now: c.Now})}
}

// elapse moves the clock and expires what is due, as etcd's lessor does.
func (f *fleet) elapse(d time.Duration) {
	f.clock.add(d)
	f.m.ExpireLeases()
}

// rows lists the mark rows, exactly, as "key=value@lease-deadline-free".
func (f *fleet) rows(t *testing.T) []string {
	t.Helper()
	c := f.m.Connect()
	defer c.Close()
	rows, _, err := c.List(context.Background(), hotmarks.RowPrefix)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Key + "=" + string(r.Value)
	}
	return out
}

const hold = 2 * time.Second

// strata starts a Shared on a client of its own; not started when
// start is false.
func (f *fleet) strata(t *testing.T, cfg hotmarks.Config, start bool) (*hotmarks.Shared, *store.MemoryClient) {
	t.Helper()
	c := f.m.Connect()
	t.Cleanup(func() { _ = c.Close() })
	if cfg.Hold == 0 {
		cfg.Hold = hold
	}
	if cfg.Interval == 0 {
		cfg.Interval = 5 * time.Millisecond
	}
	s, err := hotmarks.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if start {
		s.Start()
	}
	return s, c
}

func counter(key string, since, seen int64) hotkeys.Mark {
	return hotkeys.Mark{Key: key, Kind: hotkeys.KindCounter, K: 8, Since: since, Seen: seen}
}

func show(ms []hotkeys.Mark) string { return fmt.Sprint(ms) }

// waitMarks polls s until its marks render as want.
func waitMarks(t *testing.T, s *hotmarks.Shared, want []hotkeys.Mark) {
	t.Helper()
	poll.Until(t, wait, "marks "+show(want), func() bool { return show(s.Marks(0)) == show(want) })
}

// A mark published by one strata is seen by another, and its row goes
// exactly hold after it was written when nobody reports it again.
func TestExpiresExactlyAfterHold(t *testing.T) {
	f := newFleet()
	a, _ := f.strata(t, hotmarks.Config{}, true)
	b, _ := f.strata(t, hotmarks.Config{}, true)
	now := f.clock.nanos()
	m := counter("votes:1", now, now)
	a.Publish([]hotkeys.Mark{m})
	waitMarks(t, b, []hotkeys.Mark{m})
	waitMarks(t, a, []hotkeys.Mark{m})
	if got := fmt.Sprint(f.rows(t)); got != fmt.Sprintf(`[hotkeys/marks/votes:1={"kind":"counter","k":8,"since":%d,"seen":%d}]`, now, now) {
		t.Fatalf("rows %s", got)
	}
	f.elapse(hold - time.Nanosecond)
	if got := len(f.rows(t)); got != 1 {
		t.Fatalf("%d rows a nanosecond before the hold ran out, want 1", got)
	}
	f.elapse(time.Nanosecond)
	if got := len(f.rows(t)); got != 0 {
		t.Fatalf("%d rows when the hold ran out, want 0", got)
	}
	waitMarks(t, b, nil)
	waitMarks(t, a, nil)
	if st := a.Stats(); st.Published != 1 || st.Written != 1 || st.Writes != 1 || st.WriteErrors != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// Every report moves the row to a fresh lease: a key goes hold after the
// last strata reported it, and keeps the Since of its first report.
func TestLastReportHolds(t *testing.T) {
	f := newFleet()
	a, _ := f.strata(t, hotmarks.Config{}, true)
	b, _ := f.strata(t, hotmarks.Config{}, true)
	t0 := f.clock.nanos()
	a.Publish([]hotkeys.Mark{counter("k", t0, t0)})
	waitMarks(t, b, []hotkeys.Mark{counter("k", t0, t0)})

	f.elapse(time.Second)
	t1 := f.clock.nanos()
	b.Publish([]hotkeys.Mark{counter("k", t1, t1)}) // b's detector finds it hot on its own
	waitMarks(t, a, []hotkeys.Mark{counter("k", t0, t1)})
	waitMarks(t, b, []hotkeys.Mark{counter("k", t0, t1)})

	f.elapse(hold - time.Second) // a's report ran out, b's holds
	if got := len(f.rows(t)); got != 1 {
		t.Fatalf("%d rows with b's report within its hold, want 1", got)
	}
	f.elapse(time.Second - time.Nanosecond)
	if got := len(f.rows(t)); got != 1 {
		t.Fatalf("%d rows a nanosecond before b's hold ran out, want 1", got)
	}
	f.elapse(time.Nanosecond)
	if got := len(f.rows(t)); got != 0 {
		t.Fatalf("%d rows after the last report's hold, want 0", got)
	}
	waitMarks(t, a, nil)
	waitMarks(t, b, nil)
}

// Publish never waits: a full buffer drops and counts, a repeat merges.
func TestFullBufferDrops(t *testing.T) {
	f := newFleet()
	s, _ := f.strata(t, hotmarks.Config{Buffer: 2}, false)
	now := f.clock.nanos()
	s.Publish([]hotkeys.Mark{counter("a", now, now), counter("b", now, now), counter("c", now, now)})
	s.Publish([]hotkeys.Mark{counter("a", now-5, now)})
	s.Publish([]hotkeys.Mark{{Key: "bad", Kind: hotkeys.KindCounter, K: 1}})
	if st := s.Stats(); st.Published != 3 || st.Dropped != 1 || st.Invalid != 1 {
		t.Fatalf("stats %+v, want 3 published, 1 dropped, 1 invalid", st)
	}
	s.Start()
	waitMarks(t, s, []hotkeys.Mark{counter("a", now-5, now), counter("b", now, now)})
	if st := s.Stats(); st.Writes != 1 || st.Written != 2 {
		t.Fatalf("stats %+v, want one write of 2 rows", st)
	}
}

// Cut off from the store, a strata keeps serving its last copy; what it
// reports meanwhile is written once it is back, and both converge.
func TestPartitionServesLastCopy(t *testing.T) {
	f := newFleet()
	a, ac := f.strata(t, hotmarks.Config{}, true)
	b, _ := f.strata(t, hotmarks.Config{}, true)
	now := f.clock.nanos()
	m1, m2 := counter("m1", now, now), counter("m2", now, now)
	a.Publish([]hotkeys.Mark{m1})
	waitMarks(t, a, []hotkeys.Mark{m1})
	ac.SetPartitioned(true)
	a.Publish([]hotkeys.Mark{m2})
	poll.Until(t, wait, "a failed write", func() bool { return a.Stats().WriteErrors > 0 })
	if got := show(a.Marks(now)); got != show([]hotkeys.Mark{m1}) {
		t.Fatalf("marks while cut off %s", got)
	}
	ac.SetPartitioned(false)
	waitMarks(t, b, []hotkeys.Mark{m1, m2})
	waitMarks(t, a, []hotkeys.Mark{m1, m2})
}

// A report that waited longer than the hold for the store is not written:
// the key cooled down meanwhile.
func TestCooledWhileCutOff(t *testing.T) {
	f := newFleet()
	a, ac := f.strata(t, hotmarks.Config{}, true)
	ac.SetPartitioned(true)
	now := f.clock.nanos()
	a.Publish([]hotkeys.Mark{counter("k", now, now)})
	poll.Until(t, wait, "a failed write", func() bool { return a.Stats().WriteErrors > 0 })
	f.clock.add(hold + time.Nanosecond)
	a.Marks(f.clock.nanos()) // the tier tells the time when it reads the marks
	poll.Until(t, wait, "the cooled mark given up", func() bool { return a.Stats().Cooled == 1 })
	ac.SetPartitioned(false)
	b, _ := f.strata(t, hotmarks.Config{}, true)
	b.Publish([]hotkeys.Mark{counter("other", f.clock.nanos(), f.clock.nanos())})
	waitMarks(t, a, []hotkeys.Mark{counter("other", f.clock.nanos(), f.clock.nanos())})
	if got := len(f.rows(t)); got != 1 {
		t.Fatalf("%d rows, want only the fresh mark", got)
	}
}

// Rows no rule could have made are ignored and counted; a valid row
// written over one is taken.
func TestInvalidRowsIgnored(t *testing.T) {
	f := newFleet()
	s, _ := f.strata(t, hotmarks.Config{}, true)
	raw := f.m.Connect()
	defer raw.Close()
	ctx := context.Background()
	if _, err := store.PutRow(ctx, raw, hotmarks.RowPrefix+"x", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, wait, "the invalid row counted", func() bool { return s.Stats().Invalid == 1 })
	if _, err := store.PutRow(ctx, raw, hotmarks.RowPrefix+"x", []byte(`{"kind":"read","k":3,"since":1,"seen":2}`)); err != nil {
		t.Fatal(err)
	}
	waitMarks(t, s, []hotkeys.Mark{{Key: "x", Kind: hotkeys.KindRead, K: 3, Since: 1, Seen: 2}})
}

// Close is idempotent, ends the goroutine even against a store that does
// not answer, and drops what is reported after it.
func TestClose(t *testing.T) {
	f := newFleet()
	s, c := f.strata(t, hotmarks.Config{Timeout: time.Hour}, true)
	c.SetPartitioned(true) // the watch now waits and a write would fail
	now := f.clock.nanos()
	s.Publish([]hotkeys.Mark{counter("k", now, now)})
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("Close did not return")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.Publish([]hotkeys.Mark{counter("k", now, now)})
	if st := s.Stats(); st.Dropped != 1 {
		t.Fatalf("stats after Close %+v, want 1 dropped", st)
	}
	never, _ := f.strata(t, hotmarks.Config{}, false)
	if err := never.Close(); err != nil {
		t.Fatal(err)
	}
	never.Start() // after Close: nothing starts
}

func TestConfig(t *testing.T) {
	f := newFleet()
	c := f.m.Connect()
	defer c.Close()
	for _, cfg := range []hotmarks.Config{
		{Hold: 500 * time.Millisecond},
		{Hold: time.Second, Interval: 2 * time.Second},
		{Buffer: -1},
		{Timeout: time.Microsecond},
	} {
		if _, err := hotmarks.New(c, cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}
