package embedded

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// checkIndex verifies the table against want (entry index -> tag): every
// entry is reachable from its home slot without crossing an empty slot,
// nothing else is stored, and the load stays inside the resize band.
func checkIndex(t *testing.T, ix *hashIndex, want map[int32]uint32) {
	t.Helper()
	if ix.len() != len(want) {
		t.Fatalf("count %d, want %d", ix.len(), len(want))
	}
	n := len(ix.slots)
	if n < minIndexSlots || n&(n-1) != 0 || ix.mask != uint64(n-1) {
		t.Fatalf("%d slots, mask %#x", n, ix.mask)
	}
	if ix.len()*growDen > n*growNum {
		t.Fatalf("%d entries overfill %d slots", ix.len(), n)
	}
	if n > minIndexSlots && ix.len()*shrinkDen < n {
		t.Fatalf("%d entries leave %d slots nearly empty", ix.len(), n)
	}
	seen := 0
	for p, s := range ix.slots {
		if s == 0 {
			continue
		}
		seen++
		i := int32(uint32(s)) - 1
		tag, ok := want[i]
		if !ok || uint32(s>>32) != tag {
			t.Fatalf("slot %d holds %#x, not a wanted entry", p, s)
		}
		for q := uint64(tag) & ix.mask; q != uint64(p); q = (q + 1) & ix.mask {
			if ix.slots[q] == 0 {
				t.Fatalf("entry %d at slot %d is cut off from its home %d by empty slot %d", i, p, uint64(tag)&ix.mask, q)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("%d occupied slots, want %d", seen, len(want))
	}
}

// Random inserts and removals with few distinct tags, so runs are long,
// wrap around the end of the table and share tags, through several
// growths and shrinks.
func TestHashIndexRandom(t *testing.T) {
	for _, tags := range []uint32{3, 64, 1<<32 - 1} {
		t.Run(fmt.Sprint(tags), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tags)))
			var ix hashIndex
			ix.init()
			want := map[int32]uint32{}
			var live []int32
			next := int32(0)
			maxSlots := 0
			for step := 0; step < 20_000; step++ {
				// Grow for the first half, drain in the second.
				grow := step < 10_000
				if len(live) > 0 && (r.IntN(3) == 0 || !grow) {
					k := r.IntN(len(live))
					i := live[k]
					live[k] = live[len(live)-1]
					live = live[:len(live)-1]
					ix.remove(want[i], i)
					delete(want, i)
				} else {
					// Tags near the top of the range end their runs at the
					// table's end, exercising wrap-around.
					tag := uint32(r.Uint64N(uint64(tags)))
					if r.IntN(4) == 0 {
						tag = ^uint32(0) - uint32(r.IntN(3))
					}
					ix.insert(tag, next)
					want[next] = tag
					live = append(live, next)
					next++
				}
				maxSlots = max(maxSlots, len(ix.slots))
				if step%97 == 0 || len(live) < 20 {
					checkIndex(t, &ix, want)
				}
			}
			checkIndex(t, &ix, want)
			if maxSlots < 4096 || len(ix.slots) != minIndexSlots {
				t.Fatalf("table peaked at %d slots and ended at %d: growth or shrink not exercised", maxSlots, len(ix.slots))
			}
		})
	}
}

// Keys that share a full 64-bit hash each get their own slot and are told
// apart by key; removing one leaves the others reachable.
func TestShardHashCollisions(t *testing.T) {
	var sh shard
	sh.init(1 << 30)
	const n = 300 // far more than a cache line of slots, forcing long runs and growth
	key := func(i int) string { return fmt.Sprintf("k%d", i) }
	for i := range n {
		k := key(i)
		sh.insertLocked([]byte(k+"v"), len(k), 42, 0, 0, clockStart, 1, 0)
	}
	find := func(i int) bool {
		j := sh.lookupLocked([]byte(key(i)), 42, clockStart, nil)
		return j != nilIdx && string(sh.entries[j].key()) == key(i)
	}
	for i := 0; i < n; i += 2 {
		sh.unlinkLocked(sh.lookupLocked([]byte(key(i)), 42, clockStart, nil))
	}
	for i := range n {
		if got := find(i); got != (i%2 == 1) {
			t.Fatalf("key %d found %v after removing the even keys", i, got)
		}
	}
	if sh.index.len() != n/2 || sh.items != n/2 {
		t.Fatalf("index %d items %d, want %d", sh.index.len(), sh.items, n/2)
	}
	// A key with the same hash but never inserted probes the whole run and
	// misses; one with another hash misses at once.
	if sh.lookupLocked([]byte("absent"), 42, clockStart, nil) != nilIdx ||
		sh.lookupLocked([]byte(key(1)), 43, clockStart, nil) != nilIdx {
		t.Fatal("found a key that is not there")
	}
}

// The entry is what a lookup reads after the index; its size is part of
// ItemOverhead.
func TestEntrySize(t *testing.T) {
	if got := unsafe.Sizeof(entry{}); got != 72 {
		t.Fatalf("entry is %d bytes; update ItemOverhead's reasoning in config.go", got)
	}
}
