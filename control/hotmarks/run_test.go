package hotmarks

import (
	"testing"
	"time"
)

// The write's due time: none while nothing waits, the next grid multiple
// of the interval for a first mark, and kept once set.
func TestWriteDue(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	iv := time.Second
	if got := writeDue(time.Time{}, now, false, iv); !got.IsZero() {
		t.Errorf("nothing waiting: due %v, want none", got)
	}
	first := writeDue(time.Time{}, now, true, iv)
	if d := first.Sub(now); d <= 0 || d > iv {
		t.Errorf("a first mark: due in %v, want in (0, %v]", d, iv)
	}
	if next := writeDue(time.Time{}, first, true, iv); next.Sub(first) != iv {
		t.Errorf("marks waiting at a due time: next one %v later, want a whole interval on the grid", next.Sub(first))
	}
	set := now.Add(300 * time.Millisecond)
	for _, waiting := range []bool{false, true} {
		if got := writeDue(set, now.Add(time.Hour), waiting, iv); !got.Equal(set) {
			t.Errorf("due already set, waiting %v: %v, want it kept (%v)", waiting, got, set)
		}
	}
}
