package placesvc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
)

// TestShiftMovesOnOneVisit: region b reads one of a's μ-shards once every
// 20 minutes for 8 hours (stray reads: one visit each, none moves). Then
// 30 of a's μ-shards get their first visit from b within 6 minutes, as
// when users move. Each is decided as it comes (its claim is counted, and
// it waits for migrate_after) and again migrate_after later; the pair
// (b, a) shifts during those second decisions, and the μ-shards decided
// from then on (u: 19 to u: 29) move on their one visit. Without the shift test every one of them waited for a
// second visit.
func TestShiftMovesOnOneVisit(t *testing.T) {
	pol := policy
	pol.Rate, pol.Burst = 1000, 1000
	ld, _ := newLeader(t, pol)
	ctx := context.Background()
	rev := int64(0)
	visit := func(name string, at time.Time) {
		rev++
		ld.Counts("counters/m-b/0", rev, batch("b", at, locsvc.Count{Name: name, N: 1, Remote: true}), at)
	}
	moved := func(evs []Event) []string {
		var out []string
		for _, e := range evs {
			if e.Kind == "prepare" {
				out = append(out, e.Name)
			}
		}
		return out
	}
	step := 20 * time.Minute
	at := t0
	for i := range 24 {
		name := fmt.Sprintf("s: %d", i)
		create(t, ld, name, "a", at)
		visit(name, at)
		for _, now := range []time.Time{at, at.Add(step / 2)} {
			evs, err := ld.Round(ctx, now)
			if err != nil {
				t.Fatal(err)
			}
			if m := moved(evs); len(m) > 0 {
				t.Fatalf("stray reads moved %v", m)
			}
		}
		at = at.Add(step)
	}
	var all []string
	for i := range 30 {
		name := fmt.Sprintf("u: %d", i)
		create(t, ld, name, "a", at)
		visit(name, at)
		evs, err := ld.Round(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, moved(evs)...)
		at = at.Add(12 * time.Second)
	}
	for end := at.Add(pol.MigrateAfter); !at.After(end); at = at.Add(time.Minute) {
		evs, err := ld.Round(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, moved(evs)...)
	}
	want := "u: 19,u: 20,u: 21,u: 22,u: 23,u: 24,u: 25,u: 26,u: 27,u: 28,u: 29"
	if got := strings.Join(all, ","); got != want {
		t.Fatalf("moved on one visit: %q, want %q (shift %+v)", got, want, ld.shifts[[2]string{"b", "a"}])
	}

	// Late claims of the pair are held: from four half-lives after the
	// shift began until eight more have passed, a μ-shard b visits twice
	// (enough without any shift) stays with a. Once the hold is over, the
	// same evidence moves it.
	began := ld.shifts[[2]string{"b", "a"}].Began
	twice := func(name string, from time.Time) []string {
		create(t, ld, name, "a", from)
		visit(name, from)
		second := from.Add(pol.MigrateAfter + time.Minute)
		visit(name, second)
		var out []string
		for now := from; !now.After(second.Add(2 * time.Minute)); now = now.Add(time.Minute) {
			evs, err := ld.Round(ctx, now)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, moved(evs)...)
		}
		return out
	}
	if m := twice("late: 1", began.Add(4*pol.HalfLife)); len(m) > 0 {
		t.Fatalf("a late claim moved during the hold: %v (shift %+v)", m, ld.shifts[[2]string{"b", "a"}])
	}
	if m := twice("late: 2", began.Add(12*pol.HalfLife)); strings.Join(m, ",") != "late: 2" {
		t.Fatalf("after the hold, two visits moved %v, want [late: 2] (shift %+v)", m, ld.shifts[[2]string{"b", "a"}])
	}
}
