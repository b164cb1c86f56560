package link

import "github.com/strata-cache/strata/tiers"

// pend is one request awaiting its reply.
type pend struct {
	op     *tiers.Op
	issued int64 // client clock (ms) when it was queued
}

// fifo is a ring of pending requests, oldest first; its capacity is a
// power of two and only grows, so a warm connection queues without
// allocating.
type fifo struct {
	buf  []pend
	head int
	n    int
}

func (f *fifo) len() int { return f.n }

func (f *fifo) push(e pend) {
	if f.n == len(f.buf) {
		size := max(16, 2*len(f.buf))
		nb := make([]pend, size)
		for i := 0; i < f.n; i++ {
			nb[i] = f.buf[(f.head+i)&(len(f.buf)-1)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.n)&(len(f.buf)-1)] = e
	f.n++
}

// front returns the oldest entry; the queue must not be empty.
func (f *fifo) front() *pend { return &f.buf[f.head] }

// pop removes and returns the oldest entry; the queue must not be empty.
func (f *fifo) pop() pend {
	e := f.buf[f.head]
	f.buf[f.head] = pend{}
	f.head = (f.head + 1) & (len(f.buf) - 1)
	f.n--
	return e
}

// takeAll empties the queue and returns its entries in order.
func (f *fifo) takeAll() []pend {
	out := make([]pend, 0, f.n)
	for f.n > 0 {
		out = append(out, f.pop())
	}
	f.head = 0
	return out
}
