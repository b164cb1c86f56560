package ring

import (
	"sync"
	"testing"
	"time"
)

type item struct {
	producer int
	seq      int
	_        [32]byte // a value larger than a word, like the sampler's slots
}

func TestNewRejectsBadSizes(t *testing.T) {
	for _, n := range []int{0, 1, 3, 100} {
		if _, err := New[int](n); err == nil {
			t.Errorf("size %d accepted", n)
		}
	}
}

func push(r *Ring[item], it item) bool {
	s, ok := r.Reserve()
	if !ok {
		return false
	}
	s.Val = it
	r.Commit(s)
	return true
}

// A full ring refuses at once and counts, and works again once drained.
func TestFullRingDropsAndCounts(t *testing.T) {
	r, _ := New[item](8)
	done := make(chan struct{})
	var accepted, refused int
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			if push(r, item{seq: i}) {
				accepted++
			} else {
				refused++
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("producer blocked on a full ring")
	}
	if accepted != 8 || refused != 12 || r.Dropped() != 12 || r.Len() != 8 || r.Pushed() != 8 {
		t.Fatalf("accepted %d refused %d dropped %d len %d pushed %d", accepted, refused, r.Dropped(), r.Len(), r.Pushed())
	}
	var got []int
	if n := r.Drain(3, func(v *item) { got = append(got, v.seq) }); n != 3 {
		t.Fatalf("drained %d", n)
	}
	if !push(r, item{seq: 100}) {
		t.Fatal("push after partial drain refused")
	}
	r.Drain(0, func(v *item) { got = append(got, v.seq) })
	want := []int{0, 1, 2, 3, 4, 5, 6, 7, 100}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
	if r.Len() != 0 || r.Drained() != 9 {
		t.Fatalf("len %d drained %d", r.Len(), r.Drained())
	}
}

// An uncommitted slot holds the consumer back without losing anything.
func TestDrainStopsAtUncommitted(t *testing.T) {
	r, _ := New[item](4)
	s1, _ := r.Reserve()
	push(r, item{seq: 2})
	if n := r.Drain(0, func(*item) {}); n != 0 {
		t.Fatalf("drained %d past an uncommitted slot", n)
	}
	s1.Val = item{seq: 1}
	r.Commit(s1)
	var got []int
	r.Drain(0, func(v *item) { got = append(got, v.seq) })
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("got %v", got)
	}
}

// Many producers, one consumer running concurrently: nothing is lost or
// duplicated, per-producer order is kept, and pushed + dropped = attempts.
func TestConcurrentProducers(t *testing.T) {
	const producers, per = 8, 20000
	r, _ := New[item](256)
	var wg sync.WaitGroup
	accepted := make([]int, producers)
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				if push(r, item{producer: p, seq: i}) {
					accepted[p]++
				}
			}
		}()
	}
	stop := make(chan struct{})
	consumed := make(chan [producers]int)
	go func() {
		var count [producers]int
		last := [producers]int{}
		for i := range last {
			last[i] = -1
		}
		check := func(v *item) {
			if v.seq <= last[v.producer] {
				t.Errorf("producer %d: %d after %d", v.producer, v.seq, last[v.producer])
			}
			last[v.producer] = v.seq
			count[v.producer]++
		}
		for {
			select {
			case <-stop:
				r.Drain(0, check)
				consumed <- count
				return
			default:
				r.Drain(64, check)
			}
		}
	}()
	wg.Wait()
	close(stop)
	count := <-consumed
	total := 0
	for p := 0; p < producers; p++ {
		if count[p] != accepted[p] {
			t.Errorf("producer %d: accepted %d consumed %d", p, accepted[p], count[p])
		}
		total += accepted[p]
	}
	if uint64(total) != r.Pushed() || r.Pushed()+r.Dropped() != producers*per {
		t.Fatalf("total %d pushed %d dropped %d", total, r.Pushed(), r.Dropped())
	}
	if r.Len() != 0 {
		t.Fatalf("len %d after final drain", r.Len())
	}
}

func TestReserveCommitNoAlloc(t *testing.T) {
	r, _ := New[item](1024)
	allocs := testing.AllocsPerRun(2000, func() {
		if s, ok := r.Reserve(); ok {
			s.Val.seq = 1
			r.Commit(s)
		}
		if r.Len() > 512 {
			r.Drain(0, func(*item) {})
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per push", allocs)
	}
}

func BenchmarkPushParallel(b *testing.B) {
	r, _ := New[item](1 << 16)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				r.Drain(0, func(*item) {})
			}
		}
	}()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			push(r, item{seq: 1})
		}
	})
	close(stop)
}
