package embedded

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// TestSetMaxBytesShrinksAndGrows: a shrink evicts down to the new bound
// before it returns, keeping the most recently used items; a grow lets
// the store fill again; an item over a shard's new share is refused as out
// of memory; a bound that cannot hold the smallest item in a shard is
// refused and changes nothing.
func TestSetMaxBytesShrinksAndGrows(t *testing.T) {
	s := newStore(t, Config{MaxBytes: 8 << 20, Shards: 2, MaxItemSize: 64 << 10})
	value := strings.Repeat("v", 1000)
	const n = 6000 // about 6 MB
	for i := range n {
		if r := do(s, setReq(fmt.Sprintf("k%05d", i), value)); r.Status != tiers.StatusStored {
			t.Fatalf("set %d: %v", i, r.Status)
		}
	}
	before := s.Stats()
	if before.Evictions != 0 || before.CurrItems != n {
		t.Fatalf("before: %+v", before)
	}
	if err := s.SetMaxBytes(2 << 20); err != nil {
		t.Fatal(err)
	}
	after := s.Stats()
	if after.Bytes > 2<<20 || after.LimitMaxBytes != 2<<20 || after.Evictions == 0 || after.CurrItems+after.Evictions != n {
		t.Fatalf("after shrinking to 2 MiB: %+v", after)
	}
	// The newest keys survive the shrink; the oldest were evicted.
	if r := do(s, tiers.Request{Kind: tiers.KindGet, Key: []byte(fmt.Sprintf("k%05d", n-1)), WantValue: true}); r.Status != tiers.StatusHit {
		t.Fatalf("newest key after the shrink: %v", r.Status)
	}
	if r := do(s, tiers.Request{Kind: tiers.KindGet, Key: []byte("k00000"), WantValue: true}); r.Status != tiers.StatusMiss {
		t.Fatalf("oldest key after the shrink: %v", r.Status)
	}
	if r := do(s, setReq("big", strings.Repeat("b", 60<<10))); r.Status != tiers.StatusStored {
		t.Fatalf("a 60 KB item under 1 MiB shards: %v", r.Status)
	}
	if err := s.SetMaxBytes(64 << 10); err != nil {
		t.Fatal(err)
	}
	if r := do(s, setReq("big", strings.Repeat("b", 60<<10))); r.Status != tiers.StatusNoMemory {
		t.Fatalf("a 60 KB item over 32 KiB shards: %v, want out of memory", r.Status)
	}
	if err := s.SetMaxBytes(2 << 20); err != nil {
		t.Fatal(err)
	}
	after = s.Stats()
	if err := s.SetMaxBytes(100); err == nil || !strings.Contains(err.Error(), "smallest item") {
		t.Fatalf("a bound below the smallest item per shard: %v", err)
	}
	if st := s.Stats(); st.LimitMaxBytes != 2<<20 || st.CurrItems != after.CurrItems {
		t.Fatalf("a refused bound changed the store: %+v", st)
	}
	if err := s.SetMaxBytes(16 << 20); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		do(s, setReq(fmt.Sprintf("g%05d", i), value))
	}
	if st := s.Stats(); st.CurrItems < n || st.Evictions != after.Evictions {
		t.Fatalf("after growing to 16 MiB and %d more sets: %+v", n, st)
	}
}
