package placesvc

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
)

// outcomeOf reads name's outcomes/ row; ok false when there is none.
func outcomeOf(t *testing.T, ld *Leader, name string) (locsvc.Outcome, bool) {
	t.Helper()
	row, _, err := ld.st.Get(context.Background(), ld.layout.OutcomeKey(name))
	if err != nil {
		t.Fatal(err)
	}
	if !row.Exists() {
		return locsvc.Outcome{}, false
	}
	o, err := locsvc.DecodeOutcome(row.Value)
	if err != nil {
		t.Fatal(err)
	}
	return o, true
}

func wantOutcome(t *testing.T, ld *Leader, name string, want locsvc.Outcome) {
	t.Helper()
	if got, ok := outcomeOf(t, ld, name); !ok || got != want {
		t.Fatalf("outcome of %s: %+v (found %v), want %+v", name, got, ok, want)
	}
}

// TestManualOutcome: what the leader did with a manual request is in the
// store, on its clock: started (in the move's transaction), waiting for
// return_wait with the time it decides again (and started then, the
// request kept meanwhile), refused against a pin or for a μ-shard
// already there. A request the policy alone would make writes nothing.
func TestManualOutcome(t *testing.T) {
	ld, _ := newLeader(t, policy)
	create(t, ld, "u: 1", "a", t0)
	ld.Manual("u: 1", "b")
	round(t, ld, t0, "prepare u: 1 e2 b manual")
	wantOutcome(t, ld, "u: 1", locsvc.Outcome{To: "b", Result: locsvc.Started, Reason: "manual", At: t0, Epoch: 2})
	promoted := t0.Add(time.Second)
	round(t, ld, promoted, "migrating u: 1 e2 b ")
	round(t, ld, promoted.Add(grace), "stable u: 1 e2 b ")

	// Back to a an hour later: a's values may live until max_ttl + grace
	// after the promotion. The request waits, and the row says until when.
	back := promoted.Add(time.Hour)
	until := promoted.Add(policy.MaxTTL + grace)
	ld.Manual("u: 1", "a")
	round(t, ld, back, "refused u: 1 e0 a return_wait")
	wantOutcome(t, ld, "u: 1", locsvc.Outcome{To: "a", Result: locsvc.Waiting, Reason: "return_wait", At: back, Until: until, Epoch: 2})
	round(t, ld, until.Add(-time.Second))
	round(t, ld, until, "prepare u: 1 e3 a manual")
	wantOutcome(t, ld, "u: 1", locsvc.Outcome{To: "a", Result: locsvc.Started, Reason: "manual", At: until, Epoch: 3})
	round(t, ld, until.Add(time.Second), "migrating u: 1 e3 a ")
	settled := until.Add(time.Second + grace)
	round(t, ld, settled, "stable u: 1 e3 a ")

	// Already there, and against a pin: refused, the reason kept.
	ld.Manual("u: 1", "a")
	round(t, ld, settled, "refused u: 1 e0 a already_owner")
	wantOutcome(t, ld, "u: 1", locsvc.Outcome{To: "a", Result: locsvc.Refused, Reason: "already_owner", At: settled, Epoch: 3})
	ld.SetPin("u: 1", "a")
	ld.Manual("u: 1", "c")
	later := settled.Add(time.Minute)
	round(t, ld, later, "refused u: 1 e0 c pinned to a")
	wantOutcome(t, ld, "u: 1", locsvc.Outcome{To: "c", Result: locsvc.Refused, Reason: "pinned to a", At: later, Epoch: 3})

	// The policy's own refusals are not requests: no row.
	create(t, ld, "u: 2", "a", t0)
	visitedBefore(ld, "b", "u: 2", later)
	ld.Counts("counters/m-b/0", 10, batch("b", later, locsvc.Count{Name: "u: 2", N: 5, Remote: true}), later)
	round(t, ld, later.Add(policy.MigrateAfter), "prepare u: 2 e2 b better")
	if o, ok := outcomeOf(t, ld, "u: 2"); ok {
		t.Fatalf("a policy move wrote an outcome: %+v", o)
	}
}

// TestManualOutcomeDuringMove: a request for a μ-shard whose move is in
// flight is decided once the move settled, on the row then; one refused
// there (a request to where the move goes) says so.
func TestManualOutcomeDuringMove(t *testing.T) {
	ld, _ := newLeader(t, policy)
	create(t, ld, "u: 1", "a", t0)
	ld.Manual("u: 1", "b")
	round(t, ld, t0, "prepare u: 1 e2 b manual")
	ld.Manual("u: 1", "b")
	round(t, ld, t0.Add(time.Second), "migrating u: 1 e2 b ")
	round(t, ld, t0.Add(time.Second+grace), "stable u: 1 e2 b ", "refused u: 1 e0 b already_owner")
	wantOutcome(t, ld, "u: 1", locsvc.Outcome{To: "b", Result: locsvc.Refused, Reason: "already_owner", At: t0.Add(time.Second + grace), Epoch: 2})
}

// TestOutcomeWriteHoldsNoLock: while a round is blocked writing the
// outcome of a refused request, the readers and setters return (mu is
// not held across the write), and a new request set meanwhile is decided
// at the next round.
func TestOutcomeWriteHoldsNoLock(t *testing.T) {
	ld, g, _ := newGatedLeader(t)
	if _, err := ld.Recover(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	create(t, ld, "u: 1", "a", t0)
	ld.SetPin("u: 1", "a")
	ld.Manual("u: 1", "b")
	res := blockedRound(t, ld, g, "Txn", t0)
	within(t, "Counters", func() { ld.Counters("u: 1", t0) })
	within(t, "InFlight", func() { ld.InFlight() })
	within(t, "Manual", func() { ld.Manual("u: 1", "a") })
	finish(t, g, res, "refused u: 1 e0 b pinned to a")
	wantOutcome(t, ld, "u: 1", locsvc.Outcome{To: "b", Result: locsvc.Refused, Reason: "pinned to a", At: t0, Epoch: 1})
	round(t, ld, t0.Add(time.Second), "refused u: 1 e0 a already_owner")
}
