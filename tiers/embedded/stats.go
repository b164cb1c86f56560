package embedded

// Stats is a snapshot of the store's counters, named after the fields of
// memcached's "stats" reply they correspond to. Counters only grow; the
// gauges (CurrItems, Bytes) are summed shard by shard, each under its own
// lock, so a snapshot taken under load is not one instant.
type Stats struct {
	CurrItems     uint64 // curr_items: linked items, expired ones not yet reclaimed included
	TotalItems    uint64 // total_items: items ever linked (every successful store)
	Bytes         uint64 // bytes: charged size, len(key)+len(value)+ItemOverhead per item
	LimitMaxBytes uint64 // limit_maxbytes

	Evictions        uint64 // evictions: live items dropped for room
	EvictedUnfetched uint64 // evicted_unfetched: of those, never read
	Reclaimed        uint64 // reclaimed: dead items freed while making room or on flush_all
	ExpiredUnfetched uint64 // expired_unfetched: dead items freed for room that were never read

	CmdGet      uint64 // cmd_get: get-kind requests without a TTL update
	GetHits     uint64 // get_hits
	GetMisses   uint64 // get_misses
	GetExpired  uint64 // get_expired: lookups that found an expired item
	GetFlushed  uint64 // get_flushed: lookups that found a flushed item
	CmdTouch    uint64 // cmd_touch: get-kind requests that set a TTL (touch, gat, mg T)
	TouchHits   uint64 // touch_hits
	TouchMisses uint64 // touch_misses

	CmdSet        uint64 // cmd_set: set-kind requests
	CasHits       uint64 // cas_hits
	CasMisses     uint64 // cas_misses: compare-and-swap on a missing key
	CasBadval     uint64 // cas_badval
	StoreTooLarge uint64 // store_too_large
	StoreNoMemory uint64 // store_no_memory

	DeleteHits   uint64 // delete_hits (md I counts as neither, as in memcached)
	DeleteMisses uint64 // delete_misses, CAS mismatches included
	IncrHits     uint64 // incr_hits
	IncrMisses   uint64 // incr_misses
	DecrHits     uint64 // decr_hits
	DecrMisses   uint64 // decr_misses

	CmdFlush uint64 // cmd_flush
}

// counters is the per-shard part of Stats, written under the shard's lock.
type counters struct {
	totalItems uint64

	evictions, evictedUnfetched, reclaimed, expiredUnfetched uint64

	cmdGet, getHits, getMisses, getExpired, getFlushed uint64
	cmdTouch, touchHits, touchMisses                   uint64

	cmdSet, casHits, casMisses, casBadval uint64
	storeTooLarge, storeNoMemory          uint64

	deleteHits, deleteMisses uint64
	incrHits, incrMisses     uint64
	decrHits, decrMisses     uint64
}

func (s *Stats) add(c *counters) {
	s.TotalItems += c.totalItems
	s.Evictions += c.evictions
	s.EvictedUnfetched += c.evictedUnfetched
	s.Reclaimed += c.reclaimed
	s.ExpiredUnfetched += c.expiredUnfetched
	s.CmdGet += c.cmdGet
	s.GetHits += c.getHits
	s.GetMisses += c.getMisses
	s.GetExpired += c.getExpired
	s.GetFlushed += c.getFlushed
	s.CmdTouch += c.cmdTouch
	s.TouchHits += c.touchHits
	s.TouchMisses += c.touchMisses
	s.CmdSet += c.cmdSet
	s.CasHits += c.casHits
	s.CasMisses += c.casMisses
	s.CasBadval += c.casBadval
	s.StoreTooLarge += c.storeTooLarge
	s.StoreNoMemory += c.storeNoMemory
	s.DeleteHits += c.deleteHits
	s.DeleteMisses += c.deleteMisses
	s.IncrHits += c.incrHits
	s.IncrMisses += c.incrMisses
	s.DecrHits += c.decrHits
	s.DecrMisses += c.decrMisses
}
