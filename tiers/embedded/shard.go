package embedded

import (
	"bytes"
	"sync"

	"github.com/strata-cache/strata/tiers"
)

// Item state bits, named after memcached's it_flags they stand for.
const (
	// bitFetched: the item has been read at least once since it was linked
	// (ITEM_FETCHED, mg h).
	bitFetched uint8 = 1 << iota
	// bitStale: md I or ms C..I marked the value as out of date (ITEM_STALE,
	// mg X).
	bitStale
	// bitTokenSent: some client already received W for this item
	// (ITEM_TOKEN_SENT, mg Z).
	bitTokenSent
	// bitKeyBinary: the item was created by a meta command with a base64
	// key (ITEM_KEY_BINARY), so mg k returns its key base64-encoded.
	bitKeyBinary
)

// keyBits is the state an item created by req starts with.
func keyBits(req *tiers.Request) uint8 {
	if req.KeyBinary {
		return bitKeyBinary
	}
	return 0
}

// nilIdx ends the LRU and free lists.
const nilIdx int32 = -1

// entry is one item, or a free slot when data is nil. Entries are addressed
// by their index in shard.entries, never by pointer across a call that may
// grow the slice.
type entry struct {
	// data is the key followed by the value. The store owns it; nothing
	// outside the shard ever holds a reference to it.
	data []byte
	// tag is the low 32 bits of the key hash, all the index keys on; the
	// index checks it before a lookup reads the entry, and unlink uses it
	// to find the entry's slot.
	tag  uint32
	klen uint32
	cas  uint64
	// exptime is the absolute Unix second of expiry, 0 for never.
	exptime int64
	// atime is memcached's it->time: when the item was linked or last
	// bumped. It feeds mg l and the flush_all cut-off.
	atime int64
	flags uint32
	// prev and next link the shard's LRU list, head = most recent. While the
	// slot is free, next links the free list.
	prev, next int32
	bits       uint8
}

func (e *entry) key() []byte   { return e.data[:e.klen] }
func (e *entry) value() []byte { return e.data[e.klen:] }
func (e *entry) cost() int64   { return int64(len(e.data)) + ItemOverhead }

// shard is one lock's worth of the store: an index, the entries it points
// into, an LRU list over them and the counters of what happened here.
type shard struct {
	// mu guards every field below it, and every entry in entries.
	mu sync.Mutex

	// index maps key hashes to entries. It holds no pointers, so the
	// garbage collector never scans it.
	index   hashIndex
	entries []entry
	free    int32 // first free slot in entries
	head    int32 // most recently used
	tail    int32 // least recently used, the next eviction candidate

	// bytes is the charge of the linked items. Invariant: bytes <= budget
	// whenever mu is released.
	bytes  int64
	budget int64 // MaxBytes/Shards; SetMaxBytes changes it
	items  int

	c counters

	// Keeps neighbouring shards' locks off each other's cache lines.
	_ [64]byte
}

func (sh *shard) init(budget int64) {
	sh.index.init()
	sh.free, sh.head, sh.tail = nilIdx, nilIdx, nilIdx
	sh.budget = budget
}

// lookupLocked finds key and drops it on the spot if it has expired or been
// flushed, as memcached's do_item_get does for every command.
func (sh *shard) lookupLocked(key []byte, h uint64, now int64, fl *flushState) int32 {
	tag := uint32(h)
	slots := sh.index.slots
	mask := sh.index.mask
	i := nilIdx
	for p := uint64(tag) & mask; ; p = (p + 1) & mask {
		s := slots[p]
		if s == 0 {
			return nilIdx
		}
		if uint32(s>>32) != tag {
			continue
		}
		j := int32(uint32(s)) - 1
		if bytes.Equal(sh.entries[j].key(), key) {
			i = j
			break
		}
	}
	e := &sh.entries[i]
	if fl.flushed(e, now) {
		sh.c.getFlushed++
		sh.unlinkLocked(i)
		return nilIdx
	}
	if expired(e.exptime, now) {
		sh.c.getExpired++
		sh.unlinkLocked(i)
		return nilIdx
	}
	return i
}

// insertLocked links a new item made of data (key then value) at the head
// of the LRU. The caller has made room for it.
func (sh *shard) insertLocked(data []byte, klen int, h uint64, flags uint32, exptime, now int64, cas uint64, bits uint8) int32 {
	i := sh.free
	if i != nilIdx {
		sh.free = sh.entries[i].next
	} else {
		sh.entries = append(sh.entries, entry{})
		i = int32(len(sh.entries) - 1)
	}
	e := &sh.entries[i]
	*e = entry{
		data:    data,
		tag:     uint32(h),
		cas:     cas,
		exptime: exptime,
		atime:   now,
		flags:   flags,
		klen:    uint32(klen),
		prev:    nilIdx,
		next:    nilIdx,
		bits:    bits,
	}
	sh.index.insert(e.tag, i)
	sh.pushFrontLocked(i)
	sh.bytes += e.cost()
	sh.items++
	sh.c.totalItems++
	return i
}

// unlinkLocked removes entry i and frees its slot. It returns the item's
// buffer so a replacement of the same size can reuse it.
func (sh *shard) unlinkLocked(i int32) []byte {
	e := &sh.entries[i]
	sh.index.remove(e.tag, i)
	sh.removeLocked(i)
	sh.bytes -= e.cost()
	sh.items--
	data := e.data
	*e = entry{next: sh.free, prev: nilIdx}
	sh.free = i
	return data
}

func (sh *shard) pushFrontLocked(i int32) {
	e := &sh.entries[i]
	e.prev = nilIdx
	e.next = sh.head
	if sh.head != nilIdx {
		sh.entries[sh.head].prev = i
	}
	sh.head = i
	if sh.tail == nilIdx {
		sh.tail = i
	}
}

func (sh *shard) removeLocked(i int32) {
	e := &sh.entries[i]
	if e.prev != nilIdx {
		sh.entries[e.prev].next = e.next
	} else {
		sh.head = e.next
	}
	if e.next != nilIdx {
		sh.entries[e.next].prev = e.prev
	} else {
		sh.tail = e.prev
	}
	e.prev, e.next = nilIdx, nilIdx
}

func (sh *shard) moveToFrontLocked(i int32) {
	if sh.head == i {
		return
	}
	sh.removeLocked(i)
	sh.pushFrontLocked(i)
}

// bumpLocked is a fetch's effect on the item (memcached's do_item_bump): the
// first fetch only marks the item fetched; later ones refresh its access
// time. That is what a running memcached shows for mg h and l, where the
// LRU maintainer keeps clearing the "active" state between fetches.
func (sh *shard) bumpLocked(i int32, now int64) {
	e := &sh.entries[i]
	if e.bits&bitFetched == 0 {
		e.bits |= bitFetched
	} else {
		e.atime = now
	}
	sh.moveToFrontLocked(i)
}

// touchLocked is memcached's do_item_update, used by add on an existing
// item and by an in-place incr/decr: refresh the access time without
// counting a fetch.
func (sh *shard) touchLocked(i int32, now int64) {
	sh.entries[i].atime = now
	sh.moveToFrontLocked(i)
}

// bufferFor returns a buffer of length n, reusing old when it is exactly
// that size so overwrites of same-sized values do not allocate. Exact size
// only: a larger buffer would hold memory the byte charge does not see.
func bufferFor(old []byte, n int) []byte {
	if cap(old) == n {
		return old[:n]
	}
	return make([]byte, n)
}
