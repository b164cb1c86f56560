package sampler

import (
	"testing"
	"time"
)

func TestTopKeysRanksTheRecentSpan(t *testing.T) {
	clk := &clock{now: t0.Add(10 * time.Second)}
	s := newSampler(t, Config{Rate: 1, Window: time.Minute, Now: clk.Now})
	s.Start()
	rec := func(d time.Duration, op Op, key string, level uint8) {
		s.Record(&Record{TimeUnixNano: t0.Add(d).UnixNano(), Op: op, Key: []byte(key), ValueSize: 1, Level: level})
	}
	// Older than the 5 s span ending at t0+10s: not counted.
	for range 9 {
		rec(time.Second, OpGet, "old:1", 0)
	}
	for i := range 4 {
		rec(6*time.Second+time.Duration(i)*time.Millisecond, OpGet, "hot:1", 1)
	}
	rec(7*time.Second, OpSet, "hot:1", 0)
	rec(7*time.Second, OpGet, "warm:2", 2)
	rec(8*time.Second, OpGet, "b:3", 0)
	rec(8*time.Second, OpGet, "a:3", 0)
	if err := s.Sync(ctx(t)); err != nil {
		t.Fatal(err)
	}
	got := s.TopKeys(3, 5*time.Second)
	if len(got) != 3 {
		t.Fatalf("top keys %+v, want 3", got)
	}
	hot := got[0]
	if hot.Key != "hot:1" || hot.Accesses != 5 || hot.Reads != 4 || hot.L1Hits != 4 || hot.PerSec != 1 || hot.Family != "hot:{N}" {
		t.Fatalf("hottest %+v", hot)
	}
	// One access each: ties are broken by key, so "warm:2" is cut.
	if got[1].Key != "a:3" || got[2].Key != "b:3" {
		t.Fatalf("order %q %q, want a:3 b:3", got[1].Key, got[2].Key)
	}
	if s.TopKeys(0, time.Second) != nil || s.TopKeys(3, 0) != nil {
		t.Fatal("an empty request returned keys")
	}
}
