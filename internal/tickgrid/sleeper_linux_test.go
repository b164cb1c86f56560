package tickgrid

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The timerfd is armed for the next multiple of the period on the grid,
// then every period: a test with a period of an hour, where arming it a
// whole period off (or off the grid) is an error of many minutes, not of
// scheduling noise. The grid's origin is moved 17 minutes back, so the
// next multiple is 43 minutes away, not a whole period.
func TestTheTimerfdIsArmedOnTheGrid(t *testing.T) {
	saved := origin
	origin = origin.Add(-17 * time.Minute)
	defer func() { origin = saved }()
	p, err := newPollTimer()
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	before := time.Now()
	if err := p.arm(time.Hour); err != nil {
		t.Fatal(err)
	}
	var spec unix.ItimerSpec
	var gerr error
	if err := p.rc.Control(func(fd uintptr) { gerr = unix.TimerfdGettime(int(fd), &spec) }); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	after := time.Now()
	if got := time.Duration(spec.Interval.Nano()); got != time.Hour {
		t.Fatalf("interval %v, want 1h", got)
	}
	due := before.Add(Until(before, time.Hour))
	// The expiry read back lies between before and after plus what is
	// left; the grid instant must lie in the same span.
	earliest, latest := before.Add(time.Duration(spec.Value.Nano())), after.Add(time.Duration(spec.Value.Nano()))
	if due.Before(earliest.Add(-time.Millisecond)) || due.After(latest.Add(time.Millisecond)) {
		t.Fatalf("armed for %v..%v from now, the grid instant is %v from now", earliest.Sub(before), latest.Sub(before), due.Sub(before))
	}
}

// A sleeper on the timerfd allocates nothing per sleep: an idle process
// makes one every wake-up, and each allocation is garbage to collect.
func TestTheTimerfdSleepAllocatesNothing(t *testing.T) {
	s := NewSleeper()
	defer s.Close()
	if s.poll == nil {
		t.Fatal("no timerfd on Linux")
	}
	s.Sleep(time.Millisecond) // arms the period
	if n := testing.AllocsPerRun(20, func() { s.Sleep(time.Millisecond) }); n != 0 {
		t.Fatalf("%.1f allocations per sleep, want 0", n)
	}
}
