package compat

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// lowerBound is the reference pointFor is held to: sort.Search over the
// whole ring, wrapping to 0 past the last point.
func lowerBound(pts []point, h uint32) int {
	i := sort.Search(len(pts), func(i int) bool { return pts[i].value >= h })
	if i == len(pts) {
		return 0
	}
	return i
}

// checkRing compares pointFor with lowerBound, and serverAt with the
// lower bound's server, at every point's value, one either side, the
// bucket edges around it, the extremes, and random probes.
func checkRing(t *testing.T, pts []point, rng *rand.Rand) {
	t.Helper()
	l := &Layout{}
	l.setContinuum(pts)
	probes := []uint32{0, 1, ^uint32(0), ^uint32(0) - 1, 1 << 31}
	for _, p := range pts {
		edge := p.value >> l.shift << l.shift
		probes = append(probes, p.value-1, p.value, p.value+1, edge, edge-1)
	}
	for range 200 {
		probes = append(probes, rng.Uint32())
	}
	for _, h := range probes {
		if got, want := l.pointFor(h), lowerBound(pts, h); got != want {
			t.Fatalf("%d points (index shift %d), h %#x: point %d, want %d", len(pts), l.shift, h, got, want)
		}
		if got, want := l.serverAt(h), int(pts[lowerBound(pts, h)].server); got != want {
			t.Fatalf("%d points (index shift %d), h %#x: server %d, want %d", len(pts), l.shift, h, got, want)
		}
	}
}

// randomRing is n points; clustered puts them all in a narrow range (one
// bucket holds most of the ring), and dup repeats values.
func randomRing(rng *rand.Rand, n int, clustered, dup bool) []point {
	pts := make([]point, n)
	base := rng.Uint32()
	for i := range pts {
		v := rng.Uint32()
		if clustered {
			v = base + rng.Uint32N(64)
		}
		if dup && i > 0 && rng.IntN(3) == 0 {
			v = pts[i-1].value
		}
		pts[i] = point{v, int32(rng.IntN(4))}
		if rng.IntN(50) == 0 {
			pts[i].server = nearSearch + int32(rng.IntN(2)) // an index past what near holds
		}
	}
	sortPoints(pts)
	return pts
}

// TestPointForIndexed holds the indexed search to a plain lower bound on
// rings of every size up to past the index's cap, uniform, clustered into
// one bucket, and with repeated values.
func TestPointForIndexed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 2, 3, 4, 5, 7, 8, 9, 100, 160, 400, 640, 1000, 1 << maxIndexBits, 1<<maxIndexBits + 3, 100_000}
	for _, n := range sizes {
		for _, clustered := range []bool{false, true} {
			for _, dup := range []bool{false, true} {
				checkRing(t, randomRing(rng, n, clustered, dup), rng)
			}
		}
	}
}

// TestContinuumIndexInvariant checks the invariant continuum.go states.
func TestContinuumIndexInvariant(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 640, 1<<maxIndexBits + 1} {
		pts := randomRing(rng, n, false, true)
		l := &Layout{}
		l.setContinuum(pts)
		if len(l.start) != 1<<(32-l.shift)+1 || l.start[len(l.start)-1] != uint32(n) {
			t.Fatalf("%d points: %d index entries at shift %d, last %d", n, len(l.start), l.shift, l.start[len(l.start)-1])
		}
		if n <= 1<<maxIndexBits && len(l.start)-1 < n {
			t.Errorf("%d points: only %d buckets", n, len(l.start)-1)
		}
		if !slices.IsSorted(l.start) {
			t.Errorf("%d points: index not nondecreasing", n)
		}
		if len(l.near) != len(l.start)-1 {
			t.Errorf("%d points: %d near entries for %d buckets", n, len(l.near), len(l.start)-1)
		}
	}
}

// FuzzPointFor reads a ring and a probe from the input: each four bytes
// after the first four are a point's value (little-endian), and the first
// four are the probe. Small rings of fuzzed values reach the index's edge
// cases (one bucket, empty buckets, values at bucket edges, repeats).
func FuzzPointFor(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 5, 0, 0, 0})                               // probe 0, one point
	f.Add([]byte{9, 0, 0, 0, 9, 0, 0, 0, 9, 0, 0, 0, 100, 0, 0, 0})     // repeated values
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0x80, 1, 0, 0, 0x80}) // probe past the last point
	f.Add([]byte{0, 0, 0, 0x40, 0, 0, 0, 0x40, 0, 0, 0, 0xc0})          // a point on a bucket edge
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 8 {
			return
		}
		h := binary.LittleEndian.Uint32(in)
		var pts []point
		for b := in[4:]; len(b) >= 4; b = b[4:] {
			pts = append(pts, point{binary.LittleEndian.Uint32(b), int32(len(pts) % 4)})
		}
		sortPoints(pts)
		l := &Layout{}
		l.setContinuum(pts)
		if got, want := l.pointFor(h), lowerBound(pts, h); got != want {
			t.Fatalf("%d points, h %#x: point %d, want %d", len(pts), h, got, want)
		}
		if got, want := l.serverAt(h), int(pts[lowerBound(pts, h)].server); got != want {
			t.Fatalf("%d points, h %#x: server %d, want %d", len(pts), h, got, want)
		}
	})
}
