package loctable

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestBatchSteps: MigrateAll writes every row it may in one revision,
// refuses a row at another epoch alone, and PromoteAll and SettleAll
// carry the batch through, journal included; more than BatchRows rows
// take more than one transaction.
func TestBatchSteps(t *testing.T) {
	h := memoryHarness(t)
	ctx := ctxT(t)
	tb, l := lead(t, h, "p1")
	var steps []Step
	for i := range BatchRows + 2 {
		name := fmt.Sprintf("u: b%02d", i)
		if _, _, err := tb.Create(ctx, l, name, "eu", now); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, Step{Name: name, Epoch: 1, To: "us", Reason: "better"})
	}
	steps[1].Epoch = 7 // decided on a row that has moved on
	later := now.Add(time.Hour)
	res, err := tb.MigrateAll(ctx, l, steps, later)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[1].Err, ErrEpoch) {
		t.Fatalf("a row at another epoch: %+v", res[1])
	}
	first, last := res[0].Rev, res[len(res)-1].Rev
	for i, r := range res {
		if i == 1 {
			continue
		}
		if r.Err != nil || r.Entry.Owner != "us" || r.Entry.State != Prepare || r.Entry.Epoch != 2 {
			t.Fatalf("row %d: %+v", i, r)
		}
		if want := first; i >= BatchRows {
			if want = last; r.Rev != want {
				t.Fatalf("row %d written at %d, want the second batch's %d", i, r.Rev, want)
			}
		} else if r.Rev != want {
			t.Fatalf("row %d written at %d, want the first batch's %d", i, r.Rev, want)
		}
	}
	if first == last {
		t.Fatalf("%d rows in one transaction", len(steps))
	}
	steps = append(steps[:1], steps[2:]...)
	for i := range steps {
		steps[i].Epoch = 2
	}
	if j, _ := tb.Journal(ctx); len(j) != len(steps) {
		t.Fatalf("journal of %d entries for %d moves", len(j), len(steps))
	}
	if res, err = tb.PromoteAll(ctx, l, steps, later); err != nil || res[0].Entry.State != Migrating || res[0].Rev != res[1].Rev {
		t.Fatalf("promote: %+v %v", res[:2], err)
	}
	if res, err = tb.SettleAll(ctx, l, steps); err != nil || res[0].Entry.State != Stable || res[0].Entry.Source != "" {
		t.Fatalf("settle: %+v %v", res[:1], err)
	}
	if j, _ := tb.Journal(ctx); len(j) != 0 {
		t.Fatalf("journal after settling: %v", j)
	}
	if res, err = tb.SettleAll(ctx, l, steps[:1]); err != nil || res[0].Err != nil || res[0].Rev == 0 {
		t.Fatalf("settling again is a no-op: %+v %v", res, err)
	}
}
