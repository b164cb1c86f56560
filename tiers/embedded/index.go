package embedded

// hashIndex maps the low 32 bits of a key hash to entry indexes: an
// open-addressing table with linear probing, whose slots are plain
// integers, so the garbage collector never scans it. A lookup reads one
// cache line of slots in the common case and touches an entry only when
// its 32 hash bits match, so a miss never leaves the index.
//
// A slot is tag<<32 | (entry index + 1), where tag is the low 32 bits of
// the key hash; 0 is an empty slot. The home slot of a tag is tag&mask, so
// the table must stay at or below 2^32 slots, far beyond an int32 entry
// index. Keys with equal tags (or equal hashes) simply occupy several
// slots; the caller tells them apart by their entries.
//
// Invariant: every occupied slot is reachable from its home slot without
// crossing an empty one. Deletion keeps it by shifting later slots back
// (no tombstones), so probe lengths depend only on the current load.
type hashIndex struct {
	slots []uint64 // length a power of two, at least minIndexSlots
	mask  uint64   // len(slots)-1
	count int      // occupied slots
}

const (
	// minIndexSlots is the size of an empty table: one cache line.
	minIndexSlots = 8
	// The table doubles before it is more than 3/4 full and halves when it
	// falls below 1/8, leaving it 1/4 full either way out of the band, so
	// an insert/delete pair at a boundary cannot resize every time.
	growNum, growDen = 3, 4
	shrinkDen        = 8
)

func (ix *hashIndex) init() {
	ix.slots = make([]uint64, minIndexSlots)
	ix.mask = minIndexSlots - 1
	ix.count = 0
}

func (ix *hashIndex) len() int { return ix.count }

func indexSlot(tag uint32, i int32) uint64 {
	return uint64(tag)<<32 | uint64(uint32(i)+1)
}

// insert adds entry i under tag. The caller guarantees i is not already
// indexed.
func (ix *hashIndex) insert(tag uint32, i int32) {
	if (ix.count+1)*growDen > len(ix.slots)*growNum {
		ix.resize(len(ix.slots) * 2)
	}
	ix.place(indexSlot(tag, i))
	ix.count++
}

func (ix *hashIndex) place(s uint64) {
	mask := ix.mask
	p := (s >> 32) & mask
	for ix.slots[p] != 0 {
		p = (p + 1) & mask
	}
	ix.slots[p] = s
}

// remove drops entry i, indexed under tag. It must be present.
func (ix *hashIndex) remove(tag uint32, i int32) {
	want := indexSlot(tag, i)
	mask := ix.mask
	p := uint64(tag) & mask
	for ix.slots[p] != want {
		p = (p + 1) & mask
	}
	// Backward shift: pull each later slot of the run into the hole unless
	// its home lies after the hole (cyclically), where it must stay.
	for j := (p + 1) & mask; ; j = (j + 1) & mask {
		s := ix.slots[j]
		if s == 0 {
			break
		}
		home := (s >> 32) & mask
		if (j-home)&mask >= (j-p)&mask {
			ix.slots[p] = s
			p = j
		}
	}
	ix.slots[p] = 0
	ix.count--
	if len(ix.slots) > minIndexSlots && ix.count*shrinkDen < len(ix.slots) {
		ix.resize(len(ix.slots) / 2)
	}
}

func (ix *hashIndex) resize(n int) {
	old := ix.slots
	ix.slots = make([]uint64, n)
	ix.mask = uint64(n - 1)
	for _, s := range old {
		if s != 0 {
			ix.place(s)
		}
	}
}
