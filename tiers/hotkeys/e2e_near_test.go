package hotkeys_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

// TestNearCacheOverMemcached: a hot read key with near = 1s, through two
// stratas over the same L1 and L2 memcached. Once the key is kept near on
// strata a, every set through a is read back at once on another
// connection of a (the entry is dropped before the set is answered); a
// set through b reaches a's readers within near.
func TestNearCacheOverMemcached(t *testing.T) {
	l1, l2 := startMemcached(t, 4), startMemcached(t, 1)
	const near = time.Second
	rule := hotkeys.Rule{Prefix: "celeb:", Kind: hotkeys.KindRead, Split: 4, Near: near}
	cfg := hotkeys.Config{Rules: []hotkeys.Rule{rule}, Rate: 100, HalfLife: hotkeys.MinHalfLife}
	a := startStrata(t, strataOpts{l1: l1, l2: l2, cfg: cfg})
	b := startStrata(t, strataOpts{l1: l1, l2: l2, cfg: cfg})
	w, r := mctext.Dial(t, a.addr), mctext.Dial(t, a.addr)
	if got := w.Set("celeb:1", "v0", 0); got != "STORED" {
		t.Fatal(got)
	}
	poll.Until(t, 20*time.Second, "celeb:1 kept near", func() bool {
		for i := 0; i < 50; i++ {
			r.Get("celeb:1")
		}
		return a.hk.Stats().NearHits > 0
	})
	for i := 1; i <= 200; i++ {
		v := "v" + strconv.Itoa(i)
		if got := w.Set("celeb:1", v, 0); got != "STORED" {
			t.Fatal(got)
		}
		for j := 0; j < 3; j++ {
			if got, _ := r.Get("celeb:1"); got != v {
				t.Fatalf("read %d after set %d through the same strata: %q", j, i, got)
			}
		}
	}
	st := a.hk.Stats()
	t.Logf("near: %d hits, %d stores, %d drops", st.NearHits, st.NearStores, st.NearDrops)
	if st.NearDrops == 0 || st.NearHits < 200 {
		t.Fatalf("the near cache served too little: %+v", st)
	}
	// A set through b: a's near copy may answer the old value, for at
	// most near.
	if got := mctext.Dial(t, b.addr).Set("celeb:1", "from-b", 0); got != "STORED" {
		t.Fatal(got)
	}
	start := time.Now()
	poll.Until(t, 10*time.Second, "a reads b's set", func() bool {
		got, _ := r.Get("celeb:1")
		return got == "from-b"
	})
	if d := time.Since(start); d > near+time.Second {
		t.Fatalf("b's set reached a's readers after %v, near is %v", d, near)
	}
}
