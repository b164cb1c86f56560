package hotkeys

import "testing"

// TestBoundedKeySteps walks one view through its life with a fake clock
// (staleness 100): the first incr refreshes and waits, the next waits on
// it; fresh views answer at once; past half the staleness one incr
// refreshes while the others keep answering; a reading below what the
// counter must have held proves a decrease; a reset discards readings
// issued before it.
func TestBoundedKeySteps(t *testing.T) {
	const st = 100
	var b boundedKey
	step := func(now int64, want boundedStep) {
		t.Helper()
		if got := b.plan(now, st); got != want {
			t.Fatalf("plan at %d: step %d, want %d", now, got, want)
		}
	}
	reply := func(delta uint64, s boundedStep, want uint64) {
		t.Helper()
		if got := b.issue(delta, s); got != want {
			t.Fatalf("issue %d: reply %d, want %d", delta, got, want)
		}
	}

	step(1000, stepWaitRefresh) // no view yet
	s0 := b.snapshot(1000)
	reply(1, stepWaitRefresh, 1)
	step(1010, stepWait) // a refresh is in flight
	reply(1, stepWait, 2)
	// The refresh read 50 in all (other stratas counted 48): both waiters
	// answer 50.
	if r := b.refreshed(50, s0, true); r != 50 || b.readAt != 1000 || b.refreshing {
		t.Fatalf("refreshed: %d, view %+v", r, b)
	}
	b.acked(1, true)
	b.acked(1, true)

	step(1040, stepCached)
	reply(1, stepCached, 51)
	b.acked(1, true)
	step(1050, stepRefresh) // half the staleness: renew ahead
	s1 := b.snapshot(1050)
	if s1.floor != 51 {
		t.Fatalf("floor %d, want 51", s1.floor)
	}
	reply(2, stepRefresh, 53)
	step(1060, stepCached) // the refresh is in flight, the view still fresh
	reply(1, stepCached, 54)
	// Nothing lower than 51 can come of increments alone: 40 is a
	// decrease made elsewhere, and the view restarts from it.
	if r := b.refreshed(40, s1, true); r != 40 || b.total != 40 || b.readAt != 1050 {
		t.Fatalf("after a decrease: %d, view %+v", r, b)
	}
	b.acked(2, true)
	b.acked(1, true)
	// A reading at or above the floor never lowers the view: increments
	// of this strata still in flight are in total, not yet in the reading.
	step(1100, stepRefresh)
	s2 := b.snapshot(1100)
	reply(5, stepRefresh, 45)
	if r := b.refreshed(41, s2, true); r != 45 {
		t.Fatalf("a lagging reading lowered the view: %d", r)
	}
	b.acked(5, true)

	step(1149, stepCached)
	step(1200, stepWaitRefresh) // the view is staleness old
	// A write through this strata resets: a refresh issued before it is
	// ignored, and its waiters get its exact reading.
	s3 := b.snapshot(1200)
	reply(1, stepWaitRefresh, 46)
	b.reset()
	if r := b.refreshed(7, s3, true); r != 7 || b.readAt != 0 {
		t.Fatalf("a reading from before a reset: %d, view %+v", r, b)
	}
	b.acked(1, true)
	// A failed increment drops the view too.
	step(1201, stepWaitRefresh)
	s4 := b.snapshot(1201)
	reply(1, stepWaitRefresh, 1)
	if r := b.refreshed(0, s4, false); r != 1 {
		t.Fatalf("failed refresh: waiters get %d, want the view's 1", r)
	}
	b.acked(1, false)
	if b.readAt != 0 || b.total != 0 || b.inflight != 0 {
		t.Fatalf("after a failed incr: %+v", b)
	}
}

// TestBoundedWaitersAnswerInIssueOrder: an incr waits for a refresh; a
// get's reading renews the view before that refresh ends. An incr issued
// next must wait with the first (the first answers with the view at the
// refresh's end, which counts the second's delta): answering it from the
// renewed view would give it less than the incr before it.
func TestBoundedWaitersAnswerInIssueOrder(t *testing.T) {
	const st = 100
	var b boundedKey
	if s := b.plan(1000, st); s != stepWaitRefresh {
		t.Fatalf("first incr: step %d", s)
	}
	s0 := b.snapshot(1000)
	b.issue(1, stepWaitRefresh)
	b.waiters = append(b.waiters, &fan{}) // as the shell queues it
	b.read(30, b.snapshot(1005))          // a get's exact sum renews the view
	s := b.plan(1010, st)
	if s != stepWait {
		t.Fatalf("an incr behind a waiter: step %d, want %d (to wait with it)", s, stepWait)
	}
	b.issue(1, s)
	r := b.refreshed(25, s0, true)
	if r != 31 {
		t.Fatalf("waiters answer %d, want 31", r)
	}
	b.waiters = b.waiters[:0]
	if s := b.plan(1020, st); s != stepCached {
		t.Fatalf("after the refresh: step %d", s)
	}
	if got := b.issue(1, stepCached); got <= r {
		t.Fatalf("the next incr answers %d, not above the waiters' %d", got, r)
	}
}
