package proxy

import (
	"testing"
	"time"
)

// TestAuthLogIsBounded: at most authLogPerSecond failure lines a second;
// the first line of the next second says how many went unlogged.
func TestAuthLogIsBounded(t *testing.T) {
	var l logLimiter
	t0 := time.Unix(1000, 0)
	for i := range authLogPerSecond {
		if ok, s := l.allow(t0.Add(time.Duration(i) * time.Millisecond)); !ok || s != 0 {
			t.Fatalf("call %d: %v %d, want let through", i, ok, s)
		}
	}
	for i := range 5 {
		if ok, _ := l.allow(t0.Add(500 * time.Millisecond)); ok {
			t.Fatalf("call %d past the bound let through", authLogPerSecond+i)
		}
	}
	if ok, s := l.allow(t0.Add(time.Second)); !ok || s != 5 {
		t.Fatalf("first call of the next second: %v %d, want let through after 5 unlogged", ok, s)
	}
}
