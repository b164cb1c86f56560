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
	// Fractions below one stay for later: 1 → 0.5 is kept, not shipped.
	tl.Served("u: home")
	if got := step(time.Second); got != "[]" {
		t.Fatalf("5: %s", got)
	}
	tl.Access("u: home", false)
	if got := step(time.Second); got != "[{u: home 1 false}]" {
		t.Fatalf("6: %s", got)
	}
	for range 3 {
		step(time.Second)
	}
	if n := tl.Len(); n != 0 {
		t.Fatalf("held %d μ-shards after they aged out", n)
	}
}
