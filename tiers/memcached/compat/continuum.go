package compat

import "math/bits"

// A ketama lookup finds the first point at or after the key's hash. A
// binary search over the whole ring takes about ten steps for four
// servers, each a branch the CPU cannot predict (the hashes are uniform),
// which cost as much as a third of an MD5 lookup and most of a cheaper
// hash's. The ring is therefore indexed by the top bits of the hash: with
// at least as many buckets as points, a bucket holds about one point, and
// the search is an index read and a step or two.
//
// Invariant: start has 1<<(32-shift) + 1 entries; start[b] is the index of
// the first point whose value is at or above b<<shift (len(points) when
// none is), so start is nondecreasing and start[len(start)-1] is
// len(points). The lower bound of any h with h>>shift == b then lies in
// [start[b], start[b+1]]: every point before start[b] is below b<<shift,
// which is at most h, and every point from start[b+1] on is at or above
// (b+1)<<shift, which is above h.

// maxIndexBits bounds the index at 64K buckets (256 KiB), reached past
// 32K points (about 200 weighted servers).
const maxIndexBits = 16

// setContinuum makes pts, sorted by value, the layout's ring and indexes
// it.
func (l *Layout) setContinuum(pts []point) {
	l.points = pts
	ib := min(bits.Len(uint(len(pts))), maxIndexBits) // buckets >= points up to the cap
	l.shift = uint(32 - ib)
	l.start = make([]uint32, 1<<ib+1)
	i := 0
	for b := range 1 << ib {
		lowest := uint32(b) << l.shift // b is 0 when ib is 0, and the shift by 32 yields 0
		for i < len(pts) && pts[i].value < lowest {
			i++
		}
		l.start[b] = uint32(i)
	}
	l.start[1<<ib] = uint32(len(pts))
	l.near = make([]uint64, 1<<ib)
	for b := range l.near {
		l.near[b] = nearEntry(pts, l.start[b], l.start[b+1])
	}
}

// Most buckets hold no point or one, and then the server of any hash in
// the bucket follows from one word, so a lookup reads near[b] alone
// instead of start[b] and then the points (two dependent loads, each a
// likely cache miss in a busy proxy, and a search whose branches the CPU
// cannot predict).
//
// Invariant: near[b] is, for bucket b, value<<32 | below<<16 | above: a
// hash h of the bucket is placed on server below when h <= value, else on
// above. An empty bucket has value 1<<32-1 and below the server of the
// first point after it; a bucket of one point has that point's value and
// server, and above the server of the next point. A bucket of two points
// or more (or a server index that does not fit 16 bits) has below ==
// nearSearch: its hashes take pointFor.
const nearSearch = 1<<16 - 1

// nearEntry is near[b] for the bucket whose points are pts[lo:hi].
func nearEntry(pts []point, lo, hi uint32) uint64 {
	server := func(i uint32) uint64 {
		if int(i) == len(pts) {
			i = 0 // past the last point, the ring wraps
		}
		return uint64(pts[i].server)
	}
	switch {
	case hi-lo > 1 || server(lo) >= nearSearch || server(hi) >= nearSearch:
		return nearSearch << 16
	case hi == lo:
		return uint64(^uint32(0))<<32 | server(lo)<<16 | server(lo)
	}
	return uint64(pts[lo].value)<<32 | server(lo)<<16 | server(hi)
}

// serverAt is the server of the first point at or after h (the server of
// pointFor(h)).
func (l *Layout) serverAt(h uint32) int {
	e := l.near[h>>l.shift]
	if uint16(e>>16) == nearSearch {
		return int(l.points[l.pointFor(h)].server)
	}
	s := uint16(e)
	if h <= uint32(e>>32) {
		s = uint16(e >> 16)
	}
	return int(s)
}

// pointFor is the index of the first point at or after h on the
// continuum (a lower bound; the first of equal values, as the incumbents'
// searches find it), wrapping to 0 past the last. The search within the
// bucket is written out rather than left to slices.BinarySearchFunc, which
// calls its comparison through a function value at each step.
func (l *Layout) pointFor(h uint32) int {
	b := h >> l.shift
	lo, end := int(l.start[b]), int(l.start[b+1])
	pts := l.points
	for n := end - lo; n > 0; {
		half := n >> 1
		if pts[lo+half].value < h {
			lo += half + 1
			n -= half + 1
		} else {
			n = half
		}
	}
	if lo == len(pts) {
		return 0
	}
	return lo
}
