package locsvc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
)

// TestTally: what each interval ships, exactly. Half-life 1s, LocalEvery 2.
func TestTally(t *testing.T) {
	tl := locsvc.NewTally(time.Second, 2)
	at := t0
	step := func(d time.Duration) string {
		at = at.Add(d)
		return fmt.Sprint(tl.Collect(at))
	}
	for range 4 {
		tl.Access("u: home", false)
	}
	tl.Access("u: away", true)
	tl.Access("u: away", false)
	// Only the remote one ships; the local-only count ages here.
	if got := step(time.Second); got != "[{u: away 2 true}]" {
		t.Fatalf("1: %s", got)
	}
	// A peer's request for u: home: its local count ships, aged one
	// half-life (4 → 2), and keeps shipping while contested.
	tl.Served("u: home")
	tl.Access("u: home", false)
	if got := step(time.Second); got != "[{u: home 3 false}]" {
		t.Fatalf("2: %s", got)
	}
	for range 3 {
		tl.Access("u: home", false)
	}
	if got := step(time.Second); got != "[{u: home 3 false}]" {
		t.Fatalf("3: %s", got)
	}
	// LocalEvery intervals after the peer's request it ages again; idle
	// entries below one half access are forgotten.
	tl.Access("u: home", false)
	if got := step(time.Second); got != "[]" {
		t.Fatalf("4: %s", got)
	}
	if n := tl.Len(); n != 1 {
		t.Fatalf("held %d μ-shards, want u: home only", n)
	}
	// Counts ship rounded to the nearest, the difference carried: about
	// 0.5 left (1 aged a half-life, and what step 3 left) ships as 1, and
	// the half access owed is taken off the next shipment.
	tl.Served("u: home")
	if got := step(time.Second); got != "[{u: home 1 false}]" {
		t.Fatalf("5: %s", got)
	}
	if got := step(time.Second); got != "[]" {
		t.Fatalf("6: %s", got)
	}
	for range 3 {
		step(time.Second)
	}
	if n := tl.Len(); n != 0 {
		t.Fatalf("held %d μ-shards after they aged out", n)
	}
}

// TestTallyOwnerBelowOne: a contested μ-shard its owner used less than
// once (decayed) still ships the owner's count, rounded to the nearest,
// and what the rounding added is taken off the next shipment, so the
// shipped total stays within half an access of the count. Rounding down
// shipped nothing, and one foreign read (1) outscored a home count of 0.9
// the leader never received.
func TestTallyOwnerBelowOne(t *testing.T) {
	tl := locsvc.NewTally(time.Second, 1)
	at := t0
	step := func() string {
		at = at.Add(time.Second)
		return fmt.Sprint(tl.Collect(at))
	}
	tl.Access("u: cold", false)
	tl.Access("u: cold", false)
	if got := step(); got != "[]" { // 2, uncontested: ages here
		t.Fatalf("1: %s", got)
	}
	if got := step(); got != "[]" { // 1
		t.Fatalf("2: %s", got)
	}
	tl.Served("u: cold")
	if got := step(); got != "[{u: cold 1 false}]" { // 0.5 ships as 1, 0.5 owed
		t.Fatalf("3: %s", got)
	}
	tl.Served("u: cold")
	tl.Access("u: cold", false)
	if got := step(); got != "[{u: cold 1 false}]" { // 1 - 0.25 ships as 1, 0.25 owed
		t.Fatalf("4: %s", got)
	}
	tl.Served("u: cold")
	if got := step(); got != "[]" { // -0.125: nothing
		t.Fatalf("5: %s", got)
	}
	for range 2 {
		step()
	}
	if n := tl.Len(); n != 0 {
		t.Fatalf("held %d μ-shards after they aged out", n)
	}
}
