package locsvc_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
)

// meter stands in for the L2 pool's memory figures.
type meter struct {
	mu          sync.Mutex // guards the fields below
	used, limit uint64
	ok          bool
}

func (m *meter) set(used, limit uint64, ok bool) {
	m.mu.Lock()
	m.used, m.limit, m.ok = used, limit, ok
	m.mu.Unlock()
}

func (m *meter) read() (uint64, uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used, m.limit, m.ok
}

// TestCapacityReport: the capacity row is written on the member's lease
// when the measurement changes, every CapacityEvery intervals otherwise,
// never while the measurement is unknown, and goes with the lease.
func TestCapacityReport(t *testing.T) { each(t, testCapacityReport) }

func testCapacityReport(t *testing.T, env harness.Env) {
	clock := harness.NewClock(t0)
	m := &meter{}
	m.set(100, 1000, true)
	s, c := start(t, env, "eu", "m1", nil, func(cfg *locsvc.Config) {
		cfg.Capacity = m.read
		cfg.CapacityEvery = 3
		cfg.Now = clock.Now
	})
	poll.Until(t, harness.Wait, "the member's session", func() bool { return ack(t, c, "m1") >= 0 })
	key := s.Layout().CapacityKey("m1")
	read := func() (locsvc.Capacity, store.Row) {
		t.Helper()
		row, _, err := c.Get(ctxT(t), key)
		if err != nil || !row.Exists() {
			t.Fatalf("capacity row: %+v %v", row, err)
		}
		got, err := locsvc.DecodeCapacity(row.Value)
		if err != nil {
			t.Fatal(err)
		}
		return got, row
	}
	step := func(what string, wantWrites uint64, want locsvc.Capacity) {
		t.Helper()
		s.ReportCapacityNow()
		if w := s.Stats().CapacityWrites; w != wantWrites {
			t.Fatalf("%s: %d writes, want %d", what, w, wantWrites)
		}
		if got, _ := read(); got != want {
			t.Fatalf("%s: row %+v, want %+v", what, got, want)
		}
	}
	first := locsvc.Capacity{Region: "eu", Used: 100, Limit: 1000, At: t0}
	step("the first interval", 1, first)
	if _, row := read(); row.Lease == 0 {
		t.Fatalf("the capacity row is not on a lease: %+v", row)
	}
	clock.Add(time.Second)
	step("unchanged", 1, first)
	clock.Add(time.Second)
	changed := locsvc.Capacity{Region: "eu", Used: 200, Limit: 1000, At: t0.Add(2 * time.Second)}
	m.set(200, 1000, true)
	step("used changed", 2, changed)
	clock.Add(time.Second)
	step("unchanged, 1 interval since", 2, changed)
	clock.Add(time.Second)
	step("unchanged, 2 intervals since", 2, changed)
	clock.Add(time.Second)
	step("unchanged, 3 intervals since", 3, locsvc.Capacity{Region: "eu", Used: 200, Limit: 1000, At: t0.Add(5 * time.Second)})
	clock.Add(time.Second)
	m.set(0, 0, false)
	step("unknown", 3, locsvc.Capacity{Region: "eu", Used: 200, Limit: 1000, At: t0.Add(5 * time.Second)})
	m.set(300, 0, true)
	step("no size", 3, locsvc.Capacity{Region: "eu", Used: 200, Limit: 1000, At: t0.Add(5 * time.Second)})
	m.set(300, 2000, true)
	step("limit changed", 4, locsvc.Capacity{Region: "eu", Used: 300, Limit: 2000, At: t0.Add(6 * time.Second)})

	// Stopped, the member's lease ends and its row with it.
	if err := s.Stop(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, harness.Wait, "the row gone with the lease", func() bool {
		row, _, err := c.Get(ctxT(t), key)
		return err == nil && !row.Exists()
	})
}

// TestCapacityEncoding: a report round-trips to the millisecond, costs a
// few bytes, and anything else is refused.
func TestCapacityEncoding(t *testing.T) {
	c := locsvc.Capacity{Region: "eu-west", Used: 48 << 20, Limit: 64 << 20, At: t0.Add(1500 * time.Microsecond)}
	v := locsvc.EncodeCapacity(c)
	got, err := locsvc.DecodeCapacity(v)
	want := c
	want.At = t0.Add(time.Millisecond)
	if err != nil || got != want {
		t.Fatalf("%+v %v, want %+v", got, err, want)
	}
	if len(v) > 2+6+8+4+4 {
		t.Fatalf("a report takes %d bytes", len(v))
	}
	zeroLimit := locsvc.EncodeCapacity(locsvc.Capacity{Region: "eu", Used: 1, At: t0})
	for name, b := range map[string][]byte{
		"empty": nil, "magic": {'A', 1}, "version": append([]byte{'K', 2}, v[2:]...),
		"no region":  locsvc.EncodeCapacity(locsvc.Capacity{Limit: 1, At: t0}),
		"zero limit": zeroLimit, "truncated": v[:len(v)-1], "trailing": append(append([]byte{}, v...), 0),
		"huge region": {'K', 1, 0, 0xff, 0xff, 0x03},
	} {
		if _, err := locsvc.DecodeCapacity(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzDecodeCapacity: DecodeCapacity never panics, and what it accepts
// encodes to a report that decodes to the same (overlong varints are
// accepted, so the bytes may differ).
func FuzzDecodeCapacity(f *testing.F) {
	// A report of a region three quarters full.
	f.Add(locsvc.EncodeCapacity(locsvc.Capacity{Region: "eu", Used: 48 << 20, Limit: 64 << 20, At: t0}))
	// An empty cache, at the epoch.
	f.Add(locsvc.EncodeCapacity(locsvc.Capacity{Region: "us-east-1", Limit: 1, At: time.UnixMilli(0)}))
	// A region length past the end.
	f.Add([]byte{'K', 1, 0, 0x7f, 'x'})
	// A limit of zero, which no member writes.
	f.Add([]byte{'K', 1, 0, 1, 'a', 1, 0})
	f.Fuzz(func(t *testing.T, v []byte) {
		c, err := locsvc.DecodeCapacity(v)
		if err != nil {
			return
		}
		if c.Region == "" || c.Limit == 0 {
			t.Fatalf("%x: accepted %+v", v, c)
		}
		again, err := locsvc.DecodeCapacity(locsvc.EncodeCapacity(c))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(c) {
			t.Fatalf("%x: %+v re-decodes to %+v, %v", v, c, again, err)
		}
	})
}
