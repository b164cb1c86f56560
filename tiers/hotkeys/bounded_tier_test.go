package hotkeys

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
)

// TestBoundedReplies: a counter under a bounded rule (staleness 100ms),
// served by two tiers over the same stores, as two stratas would be, with
// a fake clock. Every reply is exact as to the asking strata's own
// increments, counts the other's from at most 100ms back, never goes down
// while only increments happen, and a decrease made elsewhere shows at the
// next refresh.
func TestBoundedReplies(t *testing.T) {
	rule := Rule{Prefix: "votes:", Kind: KindCounter, Split: 4, Reply: ReplyBounded, Staleness: 100 * time.Millisecond}
	rg := newRig(t, rule)
	other, err := New(Config{Rules: []Rule{{Prefix: "votes:", Kind: KindCounter, Split: 4}}, Now: func() int64 { return rg.now }},
		Deps{Inner: rg.tier.inner, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	ms := int64(time.Millisecond)
	rg.now = int64(time.Hour)
	incr := func(tier *Tier, d uint64, want string) {
		t.Helper()
		r := rg.do(tier, tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("votes:1"), Delta: d, Text: true})
		if r.Status != tiers.StatusStored || (want != "" && string(r.Value) != want) {
			t.Fatalf("incr at +%dms: %v %q, want %s", (rg.now-int64(time.Hour))/ms, r.Status, r.Value, want)
		}
	}
	rg.set("votes:1", "0")
	incr(rg.tier, 1, "1") // no view: the incr reads every part, and waits for it
	for i := 0; i < 10; i++ {
		incr(other, 1, "") // exact reply, not checked here
	}
	// Bounded: within half the staleness, the view answers (the other
	// strata's 10 are not in it yet).
	rg.now += 10 * ms
	incr(rg.tier, 1, "2")
	// Past half the staleness, this incr answers from the view and
	// refreshes it, which the next one shows.
	rg.now += 50 * ms
	incr(rg.tier, 1, "3")
	rg.now += ms
	incr(rg.tier, 1, "14")
	rg.mustCount("votes:1", 14)
	// A view staleness old is not answered from: the incr waits for its
	// refresh (the exact total).
	incr(other, 5, "")
	rg.now += 200 * ms
	incr(rg.tier, 1, "20")
	// A set through this strata resets the view.
	rg.set("votes:1", "100")
	incr(rg.tier, 1, "101")
	// Consecutive incrs go to the next part each (the set deleted them):
	// three more and every part exists again.
	incr(rg.tier, 1, "102")
	incr(rg.tier, 1, "103")
	incr(rg.tier, 1, "104")
	// A decrease elsewhere: answered from the view until a refresh reads
	// it (2 where at least 105 was), then from the reading.
	if r := rg.do(other, tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeDecr, Key: []byte("votes:1"), Delta: 1000, Text: true}); string(r.Value) != "0" {
		t.Fatalf("decr elsewhere: %q", r.Value)
	}
	rg.now += ms
	incr(rg.tier, 1, "105")
	rg.now += 60 * ms
	incr(rg.tier, 1, "106")
	rg.now += ms
	incr(rg.tier, 1, "3")
	rg.mustCount("votes:1", 3)
	st := rg.tier.Stats()
	if st.BoundedReplies != 12 || st.BoundedRefreshes != 7 || st.BoundedWaits != 0 {
		t.Fatalf("stats: %+v", st)
	}
}
