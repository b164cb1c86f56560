package proc

import (
	"os"
	"testing"
)

func TestParseStatusRSS(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"Name:\tx\nVmPeak:\t  9 kB\nVmRSS:\t    1234 kB\nRssAnon:\t 1 kB\n", 1234 << 10, true},
		{"VmRSS:\t0 kB", 0, true},
		{"Name:\tkthreadd\n", 0, false}, // kernel threads have no VmRSS
		{"VmRSS:\t12 MB\n", 0, false},   // the unit is always kB
		{"VmRSS:\t-3 kB\n", 0, false},   // never negative
		{"VmRSS:\t1234\n", 0, false},    // no unit
		{"VmRSS:\tabc kB\n", 0, false},  // not a number
	} {
		got, err := ParseStatusRSS([]byte(tc.in))
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseStatusRSS(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestRSSOfSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	n, err := RSS(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if n < 1<<20 {
		t.Fatalf("RSS of a running Go test %d bytes, want at least 1 MiB", n)
	}
}

func FuzzParseStatusRSS(f *testing.F) {
	f.Add([]byte("VmRSS:\t    1234 kB\n")) // the kernel's form
	f.Add([]byte("Name:\tkthreadd\n"))     // no VmRSS line
	f.Add([]byte("VmRSS:"))                // truncated
	f.Fuzz(func(t *testing.T, in []byte) {
		n, err := ParseStatusRSS(in)
		if err == nil && (n < 0 || n%1024 != 0) {
			t.Fatalf("ParseStatusRSS(%q) = %d: not a whole number of kB", in, n)
		}
	})
}
