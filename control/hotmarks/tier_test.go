package hotmarks_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/hotmarks"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/hotkeys"
	"github.com/strata-cache/strata/tiers/layered"
)

// hotTier is one strata's hot-key tier over embedded stores, sharing its
// marks through s.
func hotTier(t *testing.T, s *hotmarks.Shared, now func() int64) *hotkeys.Tier {
	t.Helper()
	l1, err := embedded.New(embedded.Config{MaxBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	l2, err := embedded.New(embedded.Config{MaxBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	lay, err := layered.New(layered.Config{Threshold: 1}, l1, l2, inline{})
	if err != nil {
		t.Fatal(err)
	}
	rule := hotkeys.Rule{Prefix: "c:", Kind: hotkeys.KindCounter, Split: 4, Adaptive: true}
	tier, err := hotkeys.New(hotkeys.Config{Rules: []hotkeys.Rule{rule}, Hold: hold, Sample: 1, Now: now},
		hotkeys.Deps{Inner: lay, L1: l1, Marks: s, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	set := &tiers.Op{Req: tiers.Request{Kind: tiers.KindSet, Key: []byte("c:hot"), Value: []byte("0"), Text: true}, Done: func(*tiers.Op) {}}
	tier.Do(set)
	return tier
}

// incr increments c:hot through tier; embedded stores answer within Do.
func incr(t *testing.T, tier *hotkeys.Tier) {
	t.Helper()
	done := false
	op := &tiers.Op{Req: tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("c:hot"), Delta: 1, Text: true},
		Done: func(*tiers.Op) { done = true }}
	tier.Do(op)
	if !done || op.Res.Status == tiers.StatusError {
		t.Fatalf("incr: done %v, %+v", done, op.Res)
	}
}

// Only strata a sees the key hot; strata b, which sees it cold, splits it
// too once a's mark reaches it through the store.
func TestTiersSplitTheSameKeys(t *testing.T) {
	f := newFleet() // its clock holds the leases still: hold does not pass
	var now atomic.Int64
	now.Store(int64(time.Hour))
	sa, _ := f.strata(t, hotmarks.Config{}, true)
	sb, _ := f.strata(t, hotmarks.Config{}, true)
	a, b := hotTier(t, sa, now.Load), hotTier(t, sb, now.Load)

	for i := 0; i < 20_000; i++ { // 10,000/s for 2 s, above the default rate
		now.Add(int64(100 * time.Microsecond))
		incr(t, a)
	}
	if a.Stats().MarksPublished == 0 {
		t.Fatalf("a published no mark; hot keys %+v", a.HotKeys())
	}
	// b's increments come at 10/s, and each lets b look at the marks once
	// a second of its clock.
	poll.Until(t, wait, "b to mark c:hot", func() bool {
		now.Add(int64(100 * time.Millisecond))
		incr(t, b)
		return b.Stats().Marked == 1
	})
	hk := b.HotKeys()
	if len(hk) != 1 || hk[0].Key != "c:hot" || !hk[0].Split || hk[0].K != 4 {
		t.Fatalf("b's hot keys %+v, want c:hot split in 4", hk)
	}
	if hk[0].WritesPerSec >= hotkeys.DefaultRate {
		t.Fatalf("b measured c:hot at %v/s: it would have marked it itself", hk[0].WritesPerSec)
	}
}

// inline is the tiers' executor in these tests, which drive them from one
// goroutine: a delayed write resumes at once.
type inline struct{}

func (inline) Run(_ int, fn func()) { fn() }
