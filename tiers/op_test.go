package tiers

import "testing"

// The stall stamp: an Op read under generation g is held once the
// generation is past g, never before, and an unstamped Op never is.
func TestHeldThroughIsAStallSinceTheRequestWasRead(t *testing.T) {
	var own Op
	var read Op
	read.ReadUnder(3)
	for _, c := range []struct {
		op   *Op
		gen  uint64
		held bool
	}{
		{&read, 2, false}, // a view that lags the reader's
		{&read, 3, false},
		{&read, 4, true},
		{&own, 0, false},
		{&own, 9, false},
	} {
		if got := c.op.HeldThrough(c.gen); got != c.held {
			t.Errorf("stamp %d at generation %d: held %v, want %v", c.op.Stall, c.gen, got, c.held)
		}
	}
	var first Op
	first.ReadUnder(0)
	if first.Stall == 0 || !first.HeldThrough(1) {
		t.Error("a request read under generation 0 is not told from an unstamped one")
	}
}
