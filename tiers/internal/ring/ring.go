// Package ring is the queue of requests awaiting their replies on one
// pipelined connection, shared by the memcached pool's backend
// connections and the region-link client's: replies come back in the
// order the requests went out, so the oldest entry is always the one the
// next reply answers.
//
// Its capacity is a power of two and only grows, so a warm connection
// queues without allocating. Not safe for concurrent use: a connection's
// queue belongs to the event loop that owns the connection.
package ring

// Queue is a FIFO of T; the zero value is empty and ready.
type Queue[T any] struct {
	buf  []T
	head int
	n    int
}

// Len is the number of queued entries.
func (q *Queue[T]) Len() int { return q.n }

// Push appends e as the newest entry.
func (q *Queue[T]) Push(e T) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = e
	q.n++
}

// Front returns the oldest entry; the queue must not be empty.
func (q *Queue[T]) Front() *T { return &q.buf[q.head] }

// At returns the i-th oldest entry, 0 <= i < Len.
func (q *Queue[T]) At(i int) *T { return &q.buf[(q.head+i)&(len(q.buf)-1)] }

// Pop removes and returns the oldest entry; the queue must not be empty.
// The slot is cleared so the queue keeps no pointer it no longer holds.
func (q *Queue[T]) Pop() T {
	e := q.buf[q.head]
	var zero T
	q.buf[q.head] = zero
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return e
}

// AnyOf reports whether some queued entry satisfies pred, oldest first.
func (q *Queue[T]) AnyOf(pred func(*T) bool) bool {
	for i := 0; i < q.n; i++ {
		if pred(&q.buf[(q.head+i)&(len(q.buf)-1)]) {
			return true
		}
	}
	return false
}

// TakeAll empties the queue and returns its entries in order. The caller
// may push while it walks the result.
func (q *Queue[T]) TakeAll() []T {
	out := make([]T, 0, q.n)
	for q.n > 0 {
		out = append(out, q.Pop())
	}
	q.head = 0
	return out
}

// TakeNewest removes the newest k entries (k <= Len) and returns them,
// oldest first; the slots are cleared. A connection takes back the
// requests it encoded but has not written yet (a process stall's held
// writes), and may push some of them again.
func (q *Queue[T]) TakeNewest(k int) []T {
	out := make([]T, k)
	var zero T
	for i := range k {
		j := (q.head + q.n - k + i) & (len(q.buf) - 1)
		out[i], q.buf[j] = q.buf[j], zero
	}
	q.n -= k
	return out
}

func (q *Queue[T]) grow() {
	nb := make([]T, max(16, 2*len(q.buf)))
	for i := 0; i < q.n; i++ {
		nb[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
	}
	q.buf, q.head = nb, 0
}
