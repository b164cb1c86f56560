package locsvc_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
)

// TestCounters: accesses go out as one batch per interval with only the
// μ-shards touched, the remote flag where another region served one, and
// the bytes written in the stats; an idle interval writes nothing.
func TestCounters(t *testing.T) { each(t, testCounters) }

func testCounters(t *testing.T, env harness.Env) {
	at := t0.Add(time.Minute)
	s, c := start(t, env, "eu", "m1", nil, func(cfg *locsvc.Config) {
		cfg.CounterInterval = 20 * time.Millisecond
		cfg.LocalEvery = 1
		cfg.Now = func() time.Time { return at }
	})
	// The counter rows go on the ack session: wait until it exists.
	poll.Until(t, harness.Wait, "the member's session", func() bool { return ack(t, c, "m1") >= 0 })
	for i := 0; i < 3; i++ {
		s.Access("u: 1", false)
	}
	s.Served("u: 1") // a peer's request: u: 1's local count ships
	s.Access("u: 2", true)
	s.Access("u: 2", false)
	lay := s.Layout()
	var row store.Row
	poll.Until(t, harness.Wait, "the counter batch", func() bool {
		rows, _, err := c.List(ctxT(t), lay.CountersPrefix())
		if err != nil || len(rows) == 0 {
			return false
		}
		row = rows[0]
		return len(rows) == 1
	})
	if m, ok := lay.CounterMember(row.Key); !ok || m != "m1" {
		t.Fatalf("counter row %q", row.Key)
	}
	b, err := locsvc.DecodeBatch(row.Value)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(b.Counts, func(i, j int) bool { return b.Counts[i].Name < b.Counts[j].Name })
	want := fmt.Sprint(locsvc.Batch{Region: "eu", At: at, Counts: []locsvc.Count{{Name: "u: 1", N: 3}, {Name: "u: 2", N: 2, Remote: true}}})
	if got := fmt.Sprint(b); got != want {
		t.Fatalf("batch %s, want %s", got, want)
	}
	// The stats count a write once it returned.
	poll.Until(t, harness.Wait, "the stats of the batch", func() bool { return s.Stats().CounterBatches == 1 })
	if st := s.Stats(); st.CounterBytes != uint64(len(row.Key)+len(row.Value)) {
		t.Fatalf("stats %+v for one row of %d bytes", st, len(row.Key)+len(row.Value))
	}
	// Idle intervals ship nothing; the next access ships again.
	rev := row.ModRevision
	s.Access("u: 3", true)
	poll.Until(t, harness.Wait, "the second batch", func() bool {
		r, _, err := c.Get(ctxT(t), row.Key)
		if err != nil || r.ModRevision == rev {
			return false
		}
		b, err := locsvc.DecodeBatch(r.Value)
		return err == nil && len(b.Counts) == 1 && b.Counts[0] == locsvc.Count{Name: "u: 3", N: 1, Remote: true}
	})
	poll.Until(t, harness.Wait, "the stats of two batches", func() bool { return s.Stats().CounterBatches == 2 })
}

// TestCountersChunked: a batch bigger than one row is split, every chunk
// decodes on its own, and a shorter later batch removes the extra chunks.
func TestCountersChunked(t *testing.T) {
	env := harness.Memory(t)
	s, c := start(t, env, "eu", "m1", nil, func(cfg *locsvc.Config) { cfg.LocalEvery = 1 }) // shipped by hand
	poll.Until(t, harness.Wait, "the member's session", func() bool { return ack(t, c, "m1") >= 0 })
	const n = 40000 // ~20 bytes each: 800 KB, four chunks
	for i := 0; i < n; i++ {
		s.Access(fmt.Sprintf("user: %012d", i), true)
	}
	lay := s.Layout()
	s.ShipNow()
	poll.Until(t, harness.Wait, "every chunk", func() bool {
		rows, _, _ := c.List(ctxT(t), lay.CountersPrefix())
		total := 0
		for _, r := range rows {
			b, err := locsvc.DecodeBatch(r.Value)
			if err != nil {
				t.Fatal(err)
			}
			total += len(b.Counts)
		}
		return len(rows) > 1 && total == n
	})
	s.Access("u: 1", true)
	s.ShipNow()
	poll.Until(t, harness.Wait, "one chunk left", func() bool {
		rows, _, _ := c.List(ctxT(t), lay.CountersPrefix())
		return len(rows) == 1
	})
}

func TestBatchRoundTrip(t *testing.T) {
	b := locsvc.Batch{Region: "eu", At: t0, Counts: []locsvc.Count{{Name: "u: 1", N: 1 << 40, Remote: true}, {Name: "g: x", N: 0}}}
	got, err := locsvc.DecodeBatch(locsvc.EncodeBatch(b))
	if err != nil || fmt.Sprint(got) != fmt.Sprint(b) {
		t.Fatalf("%+v %v", got, err)
	}
	// A count costs its name plus two or three bytes: counter traffic is
	// small next to the values it counts.
	one := locsvc.EncodeBatch(locsvc.Batch{Region: "eu", At: t0, Counts: []locsvc.Count{{Name: "u: 12345", N: 100}}})
	empty := locsvc.EncodeBatch(locsvc.Batch{Region: "eu", At: t0})
	if d := len(one) - len(empty); d != 1+1+8+2 {
		t.Fatalf("a count of 100 for an 8-byte name costs %d bytes", d)
	}
	// Front coding: the next μ-shard of the same rule costs its last
	// bytes only.
	two := locsvc.EncodeBatch(locsvc.Batch{Region: "eu", At: t0, Counts: []locsvc.Count{{Name: "u: 12345", N: 100}, {Name: "u: 12346", N: 100}}})
	if d := len(two) - len(one); d != 1+1+1+2 {
		t.Fatalf("a second count sharing 7 of 8 bytes costs %d bytes", d)
	}
	// Version 1, written by strata not yet upgraded, is still read.
	v1 := []byte{'A', 1, 0, 2, 'e', 'u', 2, 4, 'u', ':', ' ', '1', 6, 4, 'u', ':', ' ', '2', 3}
	if got, err := locsvc.DecodeBatch(v1); err != nil || fmt.Sprint(got.Counts) != "[{u: 1 3 false} {u: 2 1 true}]" {
		t.Fatalf("version 1: %+v %v", got, err)
	}
	for name, v := range map[string][]byte{
		"empty": nil, "magic": {'B', 1}, "no region": locsvc.EncodeBatch(locsvc.Batch{At: t0}),
		"truncated": one[:len(one)-1], "trailing": append(append([]byte{}, one...), 0),
		"huge n": append(append([]byte{}, empty[:len(empty)-1]...), 0xff, 0xff, 0xff, 0x0f),
	} {
		if _, err := locsvc.DecodeBatch(v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzDecodeBatch: DecodeBatch never panics, and what it accepts encodes
// to a batch that decodes to the same (overlong varints are accepted, so
// the bytes may differ).
func FuzzDecodeBatch(f *testing.F) {
	// A batch of two counts, one remote; an empty batch; a bad name length.
	f.Add(locsvc.EncodeBatch(locsvc.Batch{Region: "eu", At: t0, Counts: []locsvc.Count{{Name: "u: 1", N: 3}, {Name: "u: 2", N: 1, Remote: true}}}))
	f.Add(locsvc.EncodeBatch(locsvc.Batch{Region: "us-east", At: t0}))
	f.Add([]byte{'A', 1, 0, 2, 'e', 'u', 1, 0x7f, 'x'})
	// Version 1 (no front coding); a shared prefix longer than the
	// previous name.
	f.Add([]byte{'A', 1, 0, 2, 'e', 'u', 2, 4, 'u', ':', ' ', '1', 6, 4, 'u', ':', ' ', '2', 3})
	f.Add([]byte{'A', 2, 0, 2, 'e', 'u', 1, 3, 1, 'x', 2})
	f.Fuzz(func(t *testing.T, v []byte) {
		b, err := locsvc.DecodeBatch(v)
		if err != nil {
			return
		}
		again, err := locsvc.DecodeBatch(locsvc.EncodeBatch(b))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(b) {
			t.Fatalf("%x: %+v re-decodes to %+v, %v", v, b, again, err)
		}
	})
}
