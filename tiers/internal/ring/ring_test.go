package ring

import (
	"slices"
	"testing"
)

// Entries come out in the order they went in across growth and
// wrap-around, and AnyOf and TakeAll see exactly the queued ones.
func TestOrderAcrossGrowthAndWrap(t *testing.T) {
	var q Queue[int]
	next, want := 0, []int(nil)
	for round := 0; round < 50; round++ {
		for range round%7 + 3 { // pushes outnumber pops: the ring grows and wraps
			q.Push(next)
			want = append(want, next)
			next++
		}
		for range round % 5 {
			if got := q.Pop(); got != want[0] {
				t.Fatalf("round %d: popped %d, want %d", round, got, want[0])
			}
			want = want[1:]
		}
		if q.Len() != len(want) || *q.Front() != want[0] {
			t.Fatalf("round %d: len %d front %d, want %d and %d", round, q.Len(), *q.Front(), len(want), want[0])
		}
	}
	last := want[len(want)-1]
	if !q.AnyOf(func(v *int) bool { return *v == last }) || q.AnyOf(func(v *int) bool { return *v == next }) {
		t.Fatal("AnyOf does not see exactly the queued entries")
	}
	if got := q.TakeAll(); !slices.Equal(got, want) || q.Len() != 0 {
		t.Fatalf("TakeAll: %v (len now %d), want %v", got, q.Len(), want)
	}
}

// A warm queue pushes and pops without allocating. Run without -race by
// make's allocation pass (the detector's instrumentation allocates).
func TestWarmQueueAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates; make allocs runs this without it")
	}
	var q Queue[[4]int64]
	for range 64 {
		q.Push([4]int64{})
	}
	for q.Len() > 0 {
		q.Pop()
	}
	if a := testing.AllocsPerRun(100, func() {
		for range 64 {
			q.Push([4]int64{1})
		}
		for q.Len() > 0 {
			q.Pop()
		}
	}); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}

// TakeNewest removes the newest entries across wrap-around and leaves the
// older ones in order; pushing after it continues the order.
func TestTakeNewestAcrossWrap(t *testing.T) {
	var q Queue[int]
	for i := range 12 {
		q.Push(i)
	}
	for range 10 {
		q.Pop()
	}
	for i := 12; i < 24; i++ { // wraps in a ring of 16
		q.Push(i)
	}
	if got := q.TakeNewest(5); !slices.Equal(got, []int{19, 20, 21, 22, 23}) {
		t.Fatalf("TakeNewest(5) = %v", got)
	}
	q.Push(99)
	want := []int{10, 11, 12, 13, 14, 15, 16, 17, 18, 99}
	if got := q.TakeAll(); !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if got := q.TakeNewest(0); len(got) != 0 || q.Len() != 0 {
		t.Fatalf("TakeNewest(0) on empty: %v len %d", got, q.Len())
	}
}
