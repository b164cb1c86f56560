package configfile

import (
	"strings"
	"testing"
	"time"
)

func TestSizes(t *testing.T) {
	good := map[string]Size{
		"64MiB": 64 << 20, "1GiB": 1 << 30, "512KiB": 512 << 10, "100MB": 100e6, "1kb": 1000,
		"4096": 4096, "10B": 10, "1.5GiB": 3 << 29, " 2 MiB ": 2 << 20,
	}
	for in, want := range good {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1MiB", "1.3B", "lots", "9999999999TiB", "1 XB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
	for in, want := range map[Size]string{64 << 20: "64MiB", 1 << 30: "1GiB", 1000: "1000B", 0: "0B", 3 << 10: "3KiB"} {
		if got := in.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(in), got, want)
		}
	}
}

func TestDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{"60s": time.Minute, " 250ms ": 250 * time.Millisecond, "1m30s": 90 * time.Second, "0s": 0} {
		var d Duration
		if err := d.UnmarshalText([]byte(in)); err != nil || time.Duration(d) != want {
			t.Errorf("%q: %v, %v; want %v", in, time.Duration(d), err, want)
		}
	}
	for in, want := range map[string]string{
		"10":   `duration "10" has no unit: write e.g. "10s"`,
		"soon": `"soon" is not a duration such as "60s" or "250ms"`,
		"-1s":  `duration "-1s" is negative`,
	} {
		var d Duration
		if err := d.UnmarshalText([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	// One unit when it can be: what `config default` prints reads back
	// the same.
	for in, want := range map[time.Duration]string{
		0: "0s", time.Hour: "1h", 2 * time.Hour: "2h", time.Minute: "60s", 30 * time.Minute: "30m",
		90 * time.Second: "90s", 250 * time.Millisecond: "250ms", 1500 * time.Millisecond: "1.5s",
	} {
		if got := Duration(in).String(); got != want {
			t.Errorf("%v: %q, want %q", in, got, want)
		}
	}
}

func TestUnsigned(t *testing.T) {
	if v, err := Unsigned[uint32](7); err != nil || v != 7 {
		t.Fatalf("7: %d, %v", v, err)
	}
	if _, err := Unsigned[uint32](1 << 32); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("1<<32: %v", err)
	}
	if _, err := Unsigned[uint64](-5); err == nil || err.Error() != "-5 is negative" {
		t.Fatalf("-5: %v", err)
	}
}
