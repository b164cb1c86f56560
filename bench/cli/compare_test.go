package cli

import (
	"bytes"
	"errors"
	"testing"
)

// A round count below one is a usage error, before anything starts.
func TestBenchCompareRoundsUsage(t *testing.T) {
	for _, rounds := range []string{"0", "-2"} {
		var stdout, stderr bytes.Buffer
		err := runBench([]string{"compare", "--rounds", rounds}, &stdout, &stderr)
		if !errors.Is(err, ErrUsage) {
			t.Errorf("--rounds %s: %v, want a usage error", rounds, err)
		}
	}
}
