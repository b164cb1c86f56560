package proxy

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

func TestAcceptBackOffDoublesToItsCap(t *testing.T) {
	var got []time.Duration
	d := time.Duration(0)
	for i := 0; i < 9; i++ {
		d = nextAcceptDelay(d)
		got = append(got, d)
	}
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 500, 500}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("delays %v, want %v ms", got, want)
		}
	}
}

func TestResourceLimitsAreTold(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("accept: %w", syscall.EMFILE), true},
		{syscall.ENFILE, true},
		{syscall.ENOBUFS, true},
		{syscall.ECONNABORTED, false},
	} {
		if got := isResourceLimit(c.err); got != c.want {
			t.Errorf("isResourceLimit(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
