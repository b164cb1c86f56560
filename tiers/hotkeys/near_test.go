package hotkeys

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/layered"
)

// TestNearCache: a read rule with near = 1s, over embedded stores, with a
// fake clock. A key is kept near only once the detector finds it hot;
// then its gets are served without a backend round trip; a write through
// this strata drops it before it is answered; a write through another
// strata shows once near expired; a value larger than near_bytes is
// never kept, and a cold key under the same rule never is.
func TestNearCache(t *testing.T) {
	var now int64 = int64(time.Hour)
	l1, _ := embedded.New(embedded.Config{MaxBytes: 8 << 20})
	l2, _ := embedded.New(embedded.Config{MaxBytes: 8 << 20})
	lay, err := layered.New(layered.Config{Threshold: 1}, l1, l2, inline{})
	if err != nil {
		t.Fatal(err)
	}
	rule := Rule{Prefix: "celeb:", Kind: KindRead, Split: 2, Near: time.Second}
	cfg := Config{Rules: []Rule{rule}, Rate: 50, HalfLife: MinHalfLife, Sample: 1, NearBytes: MinNearBytes, Now: func() int64 { return now }}
	tier, err := New(cfg, Deps{Inner: lay, L1: l1, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(cfg, Deps{Inner: lay, L1: l1, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	rg := &rig{t: t, tier: tier, l1: l1, l2: l2}
	get := func(key, want string) {
		t.Helper()
		if v, ok := rg.get(key); !ok || v != want {
			t.Fatalf("get %s at +%v: %q %v, want %q", key, time.Duration(now-int64(time.Hour)), v, ok, want)
		}
	}
	rg.set("celeb:1", "v1")
	rg.set("celeb:2", "cold")
	// 100 reads/s for 2s: the key turns hot at a scan, and from then on
	// its value is kept near.
	for i := 0; i < 200 && tier.Stats().NearStores == 0; i++ {
		get("celeb:1", "v1")
		now += int64(10 * time.Millisecond)
	}
	st := tier.Stats()
	if st.NearStores != 1 || st.NearHits != 0 {
		t.Fatalf("the hot key was not kept near: %+v", st)
	}
	copyHits := st.CopyHits + st.CopyMisses
	for i := 0; i < 50; i++ {
		get("celeb:1", "v1")
		get("celeb:2", "cold")
	}
	st = tier.Stats()
	if st.NearHits != 50 || st.CopyHits+st.CopyMisses != copyHits+50 || st.NearStores != 1 {
		t.Fatalf("50 near hits and 50 copy reads of the cold key expected: %+v", st)
	}
	// A write through this strata: dropped before the set is answered.
	rg.set("celeb:1", "v2")
	get("celeb:1", "v2")
	if st = tier.Stats(); st.NearDrops != 1 || st.NearHits != 50 {
		t.Fatalf("after a set: %+v", st)
	}
	get("celeb:1", "v2") // kept near again, by the read before
	if st = tier.Stats(); st.NearHits != 51 {
		t.Fatalf("the read after the set was not kept: %+v", st)
	}
	// A write through another strata shows once near expired.
	rg.do(other, tiers.Request{Kind: tiers.KindSet, Key: []byte("celeb:1"), Value: []byte("v3"), Text: true})
	get("celeb:1", "v2")
	now += int64(time.Second)
	get("celeb:1", "v3")
	// A value over near_bytes is never kept.
	rg.set("celeb:1", strings.Repeat("x", MinNearBytes))
	before := tier.Stats()
	get("celeb:1", strings.Repeat("x", MinNearBytes))
	get("celeb:1", strings.Repeat("x", MinNearBytes))
	if st = tier.Stats(); st.NearStores != before.NearStores || st.NearHits != before.NearHits {
		t.Fatalf("a value over near_bytes: %+v", st)
	}
	if tier.near.bytes > MinNearBytes || tier.near.entries["celeb:2"] != nil {
		t.Fatalf("near holds %d bytes, cold key %v", tier.near.bytes, tier.near.entries["celeb:2"] != nil)
	}
}
