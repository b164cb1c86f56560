package proc

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := []byte("4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 300 0 0 0 250 75 0 0 20 0 3 0 100 1000 50 18446744073709551615")
	got, err := ParseStatCPU(stat, 100)
	if err != nil {
		t.Fatal(err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Errorf("cpu %v, want %v (250 + 75 ticks at 100 Hz)", got, want)
	}
	if _, err := ParseStatCPU([]byte("12 (x) S 1 2"), 100); err == nil {
		t.Error("short stat line accepted")
	}
	if clockTicks() <= 0 {
		t.Error("no clock tick rate")
	}
	self, err := CPUTime(os.Getpid())
	if err != nil || self < 0 {
		t.Errorf("own cpu time: %v, %v", self, err)
	}
}

func TestCPUTimeFine(t *testing.T) {
	if d, err := ParseSchedstat([]byte("568738245 18372721100 1584\n")); err != nil || d != 568738245 {
		t.Errorf("ParseSchedstat = %v, %v", d, err)
	}
	for _, bad := range []string{"", "x 1 2", "-5 1 2"} {
		if _, err := ParseSchedstat([]byte(bad)); err == nil {
			t.Errorf("ParseSchedstat(%q) accepted", bad)
		}
	}
	a, err := CPUTimeFine(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn some CPU; the fine clock must see it move forward.
	x := 0
	for i := range 20_000_000 {
		x += i % 7
	}
	b, err := CPUTimeFine(os.Getpid())
	if err != nil || !(b > a) || x < 0 {
		t.Errorf("CPU time did not advance: %v -> %v, %v", a, b, err)
	}
}

// Slices counts how often a thread was put on a CPU; a goroutine that
// sleeps and wakes a few times adds at least that many.
func TestSchedCountsSlices(t *testing.T) {
	a, err := Sched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		time.Sleep(time.Millisecond) // each wake puts a thread back on a CPU
	}
	b, err := Sched(os.Getpid())
	if err != nil || b.Slices < a.Slices+5 || b.CPU < a.CPU {
		t.Errorf("Sched %+v -> %+v, %v", a, b, err)
	}
}
