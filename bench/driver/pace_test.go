package driver

import (
	"testing"
	"time"
)

func TestWaitPlan(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		d, coarse, precise time.Duration
	}{
		{-ms, 0, 0},
		{0, 0, 0},
		{300 * time.Microsecond, 0, 300 * time.Microsecond}, // a Go timer would fire a millisecond late
		{preciseSpan, 0, preciseSpan},
		{preciseSpan + ms/2, 0, preciseSpan}, // too little left for a timer: sleep in parts
		{preciseSpan + ms, ms, 0},
		{50 * ms, 48 * ms, 0}, // the timer stops preciseSpan early; the clock decides the rest
	} {
		coarse, precise := waitPlan(c.d)
		if coarse != c.coarse || precise != c.precise {
			t.Errorf("waitPlan(%v) = %v, %v; want %v, %v", c.d, coarse, precise, c.coarse, c.precise)
		}
		if coarse > 0 && c.d-coarse < coarseMin {
			t.Errorf("waitPlan(%v): the timer's %v leaves less than its millisecond of error", c.d, coarse)
		}
	}
}
