package proxy

import "testing"

func TestBucketOfMatchesBounds(t *testing.T) {
	linear := func(ns int64) int {
		for i, b := range latencyBuckets {
			if ns <= b {
				return i
			}
		}
		return len(latencyBuckets)
	}
	for _, b := range latencyBuckets {
		for _, ns := range []int64{b - 1, b, b + 1} {
			if got, want := bucketOf(ns), linear(ns); got != want {
				t.Fatalf("bucketOf(%d) = %d, want %d", ns, got, want)
			}
		}
	}
	for _, ns := range []int64{0, 1, 999, 1 << 40} {
		if got, want := bucketOf(ns), linear(ns); got != want {
			t.Fatalf("bucketOf(%d) = %d, want %d", ns, got, want)
		}
	}
}
