package ring

import (
	"fmt"
	"sync/atomic"
)

// Slot is one cell of the ring. Val belongs to the producer between Reserve
// and Commit and to the consumer during Drain's callback.
type Slot[T any] struct {
	// The slot's sequence number, stored minus the slot's index so that a
	// freshly allocated (zeroed) ring is already initialised and New does
	// not touch, and so commit, the memory of every slot. With
	// seq = stored + index:
	//   seq == pos: free for the producer of position pos;
	//   seq == pos+1: committed, readable by the consumer at pos;
	// the consumer sets seq = pos+size to free it for the next lap.
	seq atomic.Uint64
	pos uint64
	Val T
}

// cacheLine pads the hot counters apart so producers hammering tail do not
// invalidate the consumer's head.
type cacheLine [64]byte

// Ring is a bounded multi-producer single-consumer queue.
type Ring[T any] struct {
	_       cacheLine
	tail    atomic.Uint64 // next position to reserve; total reservations
	_       cacheLine
	head    atomic.Uint64 // next position to consume; total consumed
	_       cacheLine
	dropped atomic.Uint64 // Reserve calls that found the ring full
	_       cacheLine
	mask    uint64
	slots   []Slot[T]
}

// New returns a ring of size slots; size must be a power of two ≥ 2.
func New[T any](size int) (*Ring[T], error) {
	if size < 2 || size&(size-1) != 0 {
		return nil, fmt.Errorf("ring size %d: must be a power of two ≥ 2", size)
	}
	return &Ring[T]{mask: uint64(size - 1), slots: make([]Slot[T], size)}, nil
}

// Reserve claims the next slot for the caller, or reports false (and counts
// a drop) if the ring is full. It never blocks; it retries only when another
// producer won the same position.
func (r *Ring[T]) Reserve() (*Slot[T], bool) {
	pos := r.tail.Load()
	for {
		s := &r.slots[pos&r.mask]
		seq := s.seq.Load() + pos&r.mask
		switch d := int64(seq - pos); {
		case d == 0:
			if r.tail.CompareAndSwap(pos, pos+1) {
				s.pos = pos
				return s, true
			}
			pos = r.tail.Load()
		case d < 0:
			// The slot still holds the value from one lap ago: full.
			r.dropped.Add(1)
			return nil, false
		default:
			// Another producer took pos; look at the new tail.
			pos = r.tail.Load()
		}
	}
}

// Commit publishes a slot obtained from Reserve.
func (r *Ring[T]) Commit(s *Slot[T]) {
	s.seq.Store(s.pos + 1 - s.pos&r.mask)
}

// Drain hands up to max committed values (all of them if max ≤ 0) to fn in
// position order and returns how many it handed. It stops early at a slot
// reserved but not yet committed. Only one goroutine may drain at a time.
func (r *Ring[T]) Drain(max int, fn func(*T)) int {
	n := 0
	pos := r.head.Load()
	for max <= 0 || n < max {
		idx := pos & r.mask
		s := &r.slots[idx]
		if s.seq.Load()+idx != pos+1 {
			break
		}
		fn(&s.Val)
		s.seq.Store(pos + r.mask + 1 - idx)
		pos++
		n++
		// Publish progress per slot so Len stays accurate for producers
		// deciding whether to wake the consumer.
		r.head.Store(pos)
	}
	return n
}

// Len is the number of reserved but not yet drained slots (a snapshot).
func (r *Ring[T]) Len() int {
	h := r.head.Load()
	t := r.tail.Load()
	if t < h {
		return 0
	}
	return int(t - h)
}

// Cap is the number of slots.
func (r *Ring[T]) Cap() int { return len(r.slots) }

// Pushed is the number of successful Reserve calls so far.
func (r *Ring[T]) Pushed() uint64 { return r.tail.Load() }

// Drained is the number of values handed to Drain callbacks so far.
func (r *Ring[T]) Drained() uint64 { return r.head.Load() }

// Dropped is the number of Reserve calls that found the ring full.
func (r *Ring[T]) Dropped() uint64 { return r.dropped.Load() }
