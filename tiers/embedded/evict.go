package embedded

// tailSearch is how many items from the LRU tail are checked for expired or
// flushed ones before a live item is evicted (memcached looks at five).
const tailSearch = 5

// makeRoomLocked frees memory until an item charged size fits the shard's
// budget: first dead items near the tail, then live items from the tail. It
// reports false only when size exceeds the whole budget.
func (sh *shard) makeRoomLocked(size, now int64, fl *flushState) bool {
	if size > sh.budget {
		return false
	}
	for sh.bytes+size > sh.budget {
		reclaimed := false
		for i, n := sh.tail, 0; i != nilIdx && n < tailSearch; n++ {
			e := &sh.entries[i]
			prev := e.prev
			if expired(e.exptime, now) || fl.flushed(e, now) {
				sh.c.reclaimed++
				if e.bits&bitFetched == 0 {
					sh.c.expiredUnfetched++
				}
				sh.unlinkLocked(i)
				reclaimed = true
			}
			i = prev
		}
		if reclaimed {
			continue
		}
		t := sh.tail
		if t == nilIdx {
			return false // unreachable: an empty shard holds any size <= budget
		}
		if sh.entries[t].bits&bitFetched == 0 {
			sh.c.evictedUnfetched++
		}
		sh.c.evictions++
		sh.unlinkLocked(t)
	}
	return true
}

// sweepLocked drops every item that is flushed or expired at now. flush_all
// calls it so a flushed store gives its memory back at once instead of as
// the LRU tail reaches each item; the outcome seen by clients is the same.
func (sh *shard) sweepLocked(now int64, fl *flushState) {
	for i := range sh.entries {
		e := &sh.entries[i]
		if e.data == nil {
			continue
		}
		if expired(e.exptime, now) || fl.flushed(e, now) {
			sh.c.reclaimed++
			sh.unlinkLocked(int32(i))
		}
	}
}
