package placesvc

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
)

// TestIdle: a leader is idle (its Runner stops ticking) only while a round
// would do nothing: counts alone do not wake it, a remote access, a rule's
// pin, a manual request or a move in flight do, and a round that leaves
// nothing pending makes it idle again.
func TestIdle(t *testing.T) {
	ld, _ := newLeader(t, policy)
	if !ld.Idle() {
		t.Fatal("a new leader is busy")
	}
	create(t, ld, "u: 1", "a", t0)
	create(t, ld, "u: 2", "a", t0)
	ld.SetAck("m-a", 0)
	ld.Counts("counters/m-a/0", 1, batch("a", t0, locsvc.Count{Name: "u: 2", N: 5}), t0)
	if !ld.Idle() {
		t.Fatal("local counts made the leader busy")
	}
	ld.SetRulePin("v:", "b")
	if ld.Idle() {
		t.Fatal("a rule's pin changed and the leader is idle")
	}
	round(t, ld, t0) // the rule has no μ-shard
	if !ld.Idle() {
		t.Fatal("idle after the rule's round: busy")
	}
	visitedBefore(ld, "b", "u: 1", t0)
	ld.Counts("counters/m-b/0", 2, batch("b", t0, locsvc.Count{Name: "u: 1", N: 5, Remote: true}), t0)
	if ld.Idle() {
		t.Fatal("a remote access and the leader is idle")
	}
	round(t, ld, t0)
	if ld.Idle() {
		t.Fatal("a decision due in migrate_after and the leader is idle")
	}
	round(t, ld, t0.Add(10*time.Minute-time.Second))
	round(t, ld, t0.Add(10*time.Minute), "prepare u: 1 e2 b better")
	if ld.Idle() {
		t.Fatal("a move in flight and the leader is idle")
	}
}
