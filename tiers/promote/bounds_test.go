package promote

import "testing"

func TestCheckThresholdBounds(t *testing.T) {
	for n, ok := range map[int64]bool{0: false, -1: false, 1: true, 32: true, 1 << 31: true, 1<<31 + 1: false, 1 << 40: false} {
		if err := CheckThreshold(n); (err == nil) != ok {
			t.Errorf("CheckThreshold(%d) = %v, want ok %v", n, err, ok)
		}
	}
	// NewPolicy holds to the same bounds.
	if _, err := NewPolicy(MaxThreshold, []Rule{{Prefix: "a", Threshold: MinThreshold}}); err != nil {
		t.Errorf("the bounds themselves: %v", err)
	}
}
