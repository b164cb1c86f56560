package testbin

import (
	"testing"
)

// fakeT records how Require ended a test instead of ending this one.
type fakeT struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Skipf(string, ...any)  { f.skipped = true }

func TestMissingProgramFailsUnderCI(t *testing.T) {
	const missing = "strata-no-such-program"
	for _, c := range []struct {
		ci, skip        string
		failed, skipped bool
	}{
		{ci: "true", skip: "1", failed: true},
		{ci: "true", skip: "", failed: true},
		{ci: "", skip: "1", skipped: true},
		{ci: "", skip: "", failed: true},
	} {
		t.Setenv("CI", c.ci)
		t.Setenv("STRATA_SKIP_TESTBIN", c.skip)
		f := &fakeT{TB: t}
		Require(f, "none", "STRATA_SKIP_TESTBIN", missing)
		if f.failed != c.failed || f.skipped != c.skipped {
			t.Errorf("CI=%q skip=%q: failed %v skipped %v, want %v %v", c.ci, c.skip, f.failed, f.skipped, c.failed, c.skipped)
		}
	}
}

func TestFoundProgram(t *testing.T) {
	if p := Require(t, "coreutils", "STRATA_SKIP_TESTBIN", "strata-no-such-program", "sh"); p == "" {
		t.Fatal("sh not found")
	}
}

// A port is handed out once per test binary: a test that reserves
// several ports by number before binding them must not get one twice.
// A thousand draws from the ~22,000 ports below the ephemeral range
// repeat one with near certainty unless FreePort prevents it.
func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 1000 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}
