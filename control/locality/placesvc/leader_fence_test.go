package placesvc

import (
	"context"
	"testing"
	"time"
)

const fence = 45 * time.Second // longer than grace: the waits below tell them apart

// TestLapsedMemberHoldsMovesForFenceAfter: a member whose lease ended
// may still serve on its view until FenceAfter after its end (it fences
// itself by then), so a move waits that long for its ack before going on
// without it; a member that joins again counts at once.
func TestLapsedMemberHoldsMovesForFenceAfter(t *testing.T) {
	ld, tb := newLeaderWith(t, Config{Policy: policy, Regions: []string{"a", "b", "c"}, Grace: grace, Seed: 7, FenceAfter: fence})
	if _, err := ld.Recover(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	create(t, ld, "u: 1", "a", t0)
	ld.SetMembers(map[string]int64{"m-a": 0, "m-c": 0}, t0)
	ld.Manual("u: 1", "b")
	start := t0.Add(time.Hour)
	round(t, ld, start, "prepare u: 1 e2 b manual")
	_, rev, _, _ := tb.Read(context.Background(), "u: 1")
	ld.SetMembers(map[string]int64{"m-a": rev, "m-c": 0}, start)

	// m-c's lease ends: it is waited for FenceAfter more.
	lapse := start.Add(time.Minute)
	ld.SetMembers(map[string]int64{"m-a": rev}, lapse)
	round(t, ld, lapse.Add(fence-time.Nanosecond))
	promoted := lapse.Add(fence)
	round(t, ld, promoted, "migrating u: 1 e2 b ")

	// A member that lapses behind the Migrating write is waited for
	// again; one that comes back before its wait is over holds the move
	// until it acknowledges.
	_, mrev, _, _ := tb.Read(context.Background(), "u: 1")
	ld.SetMembers(map[string]int64{"m-c": mrev}, promoted) // m-a lapses, behind
	round(t, ld, promoted.Add(grace))
	ld.SetMembers(map[string]int64{"m-a": rev, "m-c": mrev}, promoted.Add(grace)) // m-a is back
	round(t, ld, promoted.Add(fence))
	ld.SetMembers(map[string]int64{"m-a": mrev, "m-c": mrev}, promoted.Add(fence))
	round(t, ld, promoted.Add(fence), "stable u: 1 e2 b ")
}

// TestNewLeaderWaitsFenceAfter: members whose lease ended before a leader
// took over are unknown to it, and may still serve on their views until
// FenceAfter after: its first step of a move waits that long after it
// recovered, even with every member it knows caught up.
func TestNewLeaderWaitsFenceAfter(t *testing.T) {
	ld, tb := newLeaderWith(t, Config{Policy: policy, Regions: []string{"a", "b", "c"}, Grace: grace, Seed: 7, FenceAfter: fence})
	if _, err := ld.Recover(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	create(t, ld, "u: 1", "a", t0)
	ld.Manual("u: 1", "b")
	round(t, ld, t0, "prepare u: 1 e2 b manual")
	_, rev, _, _ := tb.Read(context.Background(), "u: 1")
	ld.SetMembers(map[string]int64{"m-a": rev}, t0)
	round(t, ld, t0.Add(fence-time.Nanosecond))
	round(t, ld, t0.Add(fence), "migrating u: 1 e2 b ")

	// Without FenceAfter a lapsed member stops counting at once.
	ld2, _ := newLeader(t, policy)
	if _, err := ld2.Recover(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	create(t, ld2, "u: 1", "a", t0)
	ld2.SetMembers(map[string]int64{"m-a": 0}, t0)
	ld2.Manual("u: 1", "b")
	round(t, ld2, t0, "prepare u: 1 e2 b manual")
	round(t, ld2, t0)
	ld2.SetMembers(map[string]int64{}, t0)
	round(t, ld2, t0, "migrating u: 1 e2 b ")
}
