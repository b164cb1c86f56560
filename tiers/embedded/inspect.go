package embedded

import (
	"strconv"

	"github.com/cespare/xxhash/v2"

	"github.com/strata-cache/strata/tiers"
)

// Inspection: the figures memcached's stats items, stats slabs, stats
// cachedump, me and lru_crawler metadump show, computed from the store's
// items so that tools written for memcached read real numbers.
//
// The store has no slab allocator; every item is put in the slab class
// memcached 1.6.18 would give it with its default settings (-n 48, -f 1.25,
// slab_chunk_max = item_size_max/2), from the size memcached would give it
// (itemTotal). Per class, the item count, memory requested, chunk figures
// derived from them and the age of the oldest item are real. The event
// counters memcached keeps per class (evictions, hits, moves between LRU
// segments) are kept store-wide here, and reported once in stats; per class
// they read 0. Everything runs under one shard lock at a time, walking the
// shard's items: the cost is proportional to the items held, paid by the
// caller of the stats command, never by other requests beyond the shard
// lock's hold time.

const (
	slabPageSize = 1 << 20
	// dumpLimit bounds one cachedump or metadump reply, as memcached bounds
	// cachedump: a reply is built in memory on an event loop.
	dumpLimit = 2 << 20
)

// slabSizes returns memcached's chunk size per class (index 0 unused) for
// an item size limit.
func slabSizes(itemMax int) []int {
	chunkMax := itemMax / 2
	sizes := []int{0}
	size := 96.0 // item header (48) + the default minimum chunk (48)
	for len(sizes) < 63 {
		n := int(size)
		if n%8 != 0 {
			n += 8 - n%8
		}
		if float64(n) >= float64(chunkMax)/1.25 {
			break
		}
		sizes = append(sizes, n)
		size = float64(n) * 1.25
	}
	return append(sizes, chunkMax)
}

// classOf returns the slab class of an item of memcached size total: the
// smallest chunk that holds it; items above the largest chunk are chained
// from chunks of the largest class, whose id they carry.
func classOf(sizes []int, total int) int {
	lo, hi := 1, len(sizes)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if sizes[mid] >= total {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func (s *Store) sizes() []int { return slabSizes(s.maxItem) }

func (e *entry) total() int { return itemTotal(int(e.klen), e.flags, len(e.data)-int(e.klen)) }

// classFigures is one slab class's items.
type classFigures struct {
	number    uint64
	requested uint64 // sum of item sizes
	oldest    int64  // smallest atime, 0 when empty
}

// classes sums the items per class.
func (s *Store) classes() ([]int, []classFigures) {
	sizes := s.sizes()
	figs := make([]classFigures, len(sizes))
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j := range sh.entries {
			e := &sh.entries[j]
			if e.data == nil {
				continue
			}
			t := e.total()
			f := &figs[classOf(sizes, t)]
			f.number++
			f.requested += uint64(t)
			if f.oldest == 0 || e.atime < f.oldest {
				f.oldest = e.atime
			}
		}
		sh.mu.Unlock()
	}
	return sizes, figs
}

func appendStat(dst []byte, name string, v uint64) []byte {
	dst = append(dst, "STAT "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, v, 10)
	return append(dst, "\r\n"...)
}

// AppendStats appends the lines of memcached's general stats that describe
// items and memory, under memcached's own names.
func (s *Store) AppendStats(dst []byte) []byte {
	st := s.Stats().since(s.statsBase.Load())
	for _, kv := range []struct {
		name string
		v    uint64
	}{
		{"get_expired", st.GetExpired}, {"get_flushed", st.GetFlushed},
		{"store_too_large", st.StoreTooLarge}, {"store_no_memory", st.StoreNoMemory},
		{"limit_maxbytes", st.LimitMaxBytes},
		{"bytes", st.Bytes}, {"curr_items", st.CurrItems}, {"total_items", st.TotalItems},
		{"expired_unfetched", st.ExpiredUnfetched}, {"evicted_unfetched", st.EvictedUnfetched},
		{"evicted_active", 0}, {"evictions", st.Evictions}, {"reclaimed", st.Reclaimed},
		{"crawler_reclaimed", 0}, {"crawler_items_checked", 0}, {"lrutail_reflocked", 0},
		{"moves_to_cold", 0}, {"moves_to_warm", 0}, {"moves_within_lru", 0},
		{"direct_reclaims", 0}, {"lru_crawler_starts", 0}, {"lru_bumps_dropped", 0},
	} {
		dst = appendStat(dst, kv.name, kv.v)
	}
	return dst
}

// AppendSettings appends the settings lines the store decides.
func (s *Store) AppendSettings(dst []byte) []byte {
	return appendStat(dst, "maxbytes", uint64(s.maxBytes.Load()))
}

// AppendItemStats appends memcached's "stats items" lines, one block per
// class that holds items.
func (s *Store) AppendItemStats(dst []byte) []byte {
	now := s.now()
	_, figs := s.classes()
	for id := range figs {
		f := &figs[id]
		if f.number == 0 {
			continue
		}
		p := "items:" + strconv.Itoa(id) + ":"
		age := uint64(max(now-f.oldest, 0))
		for _, kv := range []struct {
			name string
			v    uint64
		}{
			{"number", f.number}, {"number_hot", 0}, {"number_warm", 0}, {"number_cold", f.number},
			{"age_hot", 0}, {"age_warm", 0}, {"age", age}, {"mem_requested", f.requested},
			{"evicted", 0}, {"evicted_nonzero", 0}, {"evicted_time", 0}, {"outofmemory", 0},
			{"tailrepairs", 0}, {"reclaimed", 0}, {"expired_unfetched", 0}, {"evicted_unfetched", 0},
			{"evicted_active", 0}, {"crawler_reclaimed", 0}, {"crawler_items_checked", 0},
			{"lrutail_reflocked", 0}, {"moves_to_cold", 0}, {"moves_to_warm", 0},
			{"moves_within_lru", 0}, {"direct_reclaims", 0}, {"hits_to_hot", 0},
			{"hits_to_warm", 0}, {"hits_to_cold", 0}, {"hits_to_temp", 0},
		} {
			dst = appendStat(dst, p+kv.name, kv.v)
		}
	}
	return dst
}

// AppendSlabStats appends memcached's "stats slabs" lines: a block per
// class that holds items, with memcached's chunk geometry, then
// active_slabs and total_malloced (here: the bytes charged for items).
func (s *Store) AppendSlabStats(dst []byte) []byte {
	sizes, figs := s.classes()
	active := uint64(0)
	for id := range figs {
		f := &figs[id]
		if f.number == 0 {
			continue
		}
		active++
		perPage := uint64(max(slabPageSize/sizes[id], 1))
		pages := (f.number + perPage - 1) / perPage
		p := strconv.Itoa(id) + ":"
		for _, kv := range []struct {
			name string
			v    uint64
		}{
			{"chunk_size", uint64(sizes[id])}, {"chunks_per_page", perPage},
			{"total_pages", pages}, {"total_chunks", pages * perPage},
			{"used_chunks", f.number}, {"free_chunks", pages*perPage - f.number},
			{"free_chunks_end", 0}, {"get_hits", 0}, {"cmd_set", 0}, {"delete_hits", 0},
			{"incr_hits", 0}, {"decr_hits", 0}, {"cas_hits", 0}, {"cas_badval", 0},
			{"touch_hits", 0},
		} {
			dst = appendStat(dst, p+kv.name, kv.v)
		}
	}
	dst = appendStat(dst, "active_slabs", active)
	return appendStat(dst, "total_malloced", s.Stats().Bytes)
}

// AppendCacheDump appends memcached's "stats cachedump" lines for class:
// "ITEM <key> [<value bytes> b; <expiry unix time, 0 for none> s]", most
// recently used first, at most limit items (0: no limit) and dumpLimit
// bytes.
func (s *Store) AppendCacheDump(dst []byte, class, limit int) []byte {
	sizes := s.sizes()
	start, n := len(dst), 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j := sh.head; j != nilIdx; j = sh.entries[j].next {
			e := &sh.entries[j]
			if classOf(sizes, e.total()) != class {
				continue
			}
			if (limit > 0 && n >= limit) || len(dst)-start > dumpLimit {
				break
			}
			n++
			dst = append(dst, "ITEM "...)
			dst = append(dst, e.key()...)
			dst = append(dst, " ["...)
			dst = strconv.AppendInt(dst, int64(len(e.data)-int(e.klen)), 10)
			dst = append(dst, " b; "...)
			dst = strconv.AppendInt(dst, max(e.exptime, 0), 10)
			dst = append(dst, " s]\r\n"...)
		}
		sh.mu.Unlock()
	}
	return dst
}

// AppendMetaDebug appends memcached's answer to "me": the item's line,
// "ME <printed> exp=<ttl, -1 for none> la=<seconds since last access>
// cas=<cas> fetch=<yes|no> cls=<class> size=<memcached size>", or "EN" when
// the key holds no live item. It reads the item without bumping it.
func (s *Store) AppendMetaDebug(dst, printed, key []byte) []byte {
	now := s.now()
	h := xxhash.Sum64(key)
	fl := s.flush.Load()
	sh := s.shardFor(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	i := sh.lookupLocked(key, h, now, fl)
	if i == nilIdx {
		return append(dst, "EN\r\n"...)
	}
	e := &sh.entries[i]
	exp := int64(-1)
	if e.exptime != 0 {
		exp = e.exptime - now
	}
	dst = append(dst, "ME "...)
	dst = append(dst, printed...)
	dst = append(dst, " exp="...)
	dst = strconv.AppendInt(dst, exp, 10)
	return appendItemTail(dst, e, now-e.atime, s.sizes())
}

// appendItemTail appends " la=… cas=… fetch=… cls=… size=…\r\n".
func appendItemTail(dst []byte, e *entry, la int64, sizes []int) []byte {
	dst = append(dst, " la="...)
	dst = strconv.AppendInt(dst, max(la, 0), 10)
	dst = append(dst, " cas="...)
	dst = strconv.AppendUint(dst, e.cas, 10)
	if e.bits&bitFetched != 0 {
		dst = append(dst, " fetch=yes"...)
	} else {
		dst = append(dst, " fetch=no"...)
	}
	t := e.total()
	dst = append(dst, " cls="...)
	dst = strconv.AppendInt(dst, int64(classOf(sizes, t)), 10)
	dst = append(dst, " size="...)
	dst = strconv.AppendInt(dst, int64(t), 10)
	return append(dst, "\r\n"...)
}

// AppendMetaDump appends memcached's "lru_crawler metadump" lines for the
// live items of the classes marked in classes (nil: all): "key=<key,
// percent-encoded> exp=<expiry unix time, -1 for none> la=<last access
// unix time> cas=… fetch=… cls=… size=…", at most dumpLimit bytes. The
// caller writes the final END.
func (s *Store) AppendMetaDump(dst []byte, classes []bool) []byte {
	now := s.now()
	fl := s.flush.Load()
	sizes := s.sizes()
	start := len(dst)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j := range sh.entries {
			e := &sh.entries[j]
			if e.data == nil || expired(e.exptime, now) || fl.flushed(e, now) {
				continue
			}
			if classes != nil {
				c := classOf(sizes, e.total())
				if c >= len(classes) || !classes[c] {
					continue
				}
			}
			if len(dst)-start > dumpLimit {
				break
			}
			dst = append(dst, "key="...)
			dst = appendURIEncoded(dst, e.key())
			exp := e.exptime
			if exp == 0 {
				exp = -1
			}
			dst = append(dst, " exp="...)
			dst = strconv.AppendInt(dst, exp, 10)
			// la in a metadump is the access time itself, not an age.
			dst = appendItemTail(dst, e, e.atime, sizes)
		}
		sh.mu.Unlock()
	}
	return dst
}

// appendURIEncoded percent-encodes every byte but the unreserved ones, as
// memcached encodes keys in a metadump.
func appendURIEncoded(dst, b []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~':
			dst = append(dst, c)
		default:
			dst = append(dst, '%', hex[c>>4], hex[c&15])
		}
	}
	return dst
}

// Crawl reclaims the expired and flushed items of the classes marked in
// classes (nil: all), as memcached's LRU crawler does when asked to crawl.
// Lookups reclaim such items anyway; crawling gives their memory back
// sooner.
func (s *Store) Crawl(classes []bool) {
	now := s.now()
	fl := s.flush.Load()
	sizes := s.sizes()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for j := range sh.entries {
			e := &sh.entries[j]
			if e.data == nil || !(expired(e.exptime, now) || fl.flushed(e, now)) {
				continue
			}
			if classes != nil {
				c := classOf(sizes, e.total())
				if c >= len(classes) || !classes[c] {
					continue
				}
			}
			sh.c.reclaimed++
			sh.unlinkLocked(int32(j))
		}
		sh.mu.Unlock()
	}
}

// ResetStats restarts the counters AppendStats shows from zero, as
// memcached's "stats reset" does. Stats itself keeps counting from the
// start, so counters exported elsewhere (Prometheus) never go backwards.
func (s *Store) ResetStats() {
	st := s.Stats()
	s.statsBase.Store(&st)
}

// since returns the counters accumulated after base; the gauges (items,
// bytes, the limit) are those of s.
func (s Stats) since(base *Stats) Stats {
	if base == nil {
		return s
	}
	d := func(now, then uint64) uint64 {
		if now < then {
			return 0
		}
		return now - then
	}
	out := s
	out.TotalItems = d(s.TotalItems, base.TotalItems)
	out.Evictions, out.EvictedUnfetched = d(s.Evictions, base.Evictions), d(s.EvictedUnfetched, base.EvictedUnfetched)
	out.Reclaimed, out.ExpiredUnfetched = d(s.Reclaimed, base.Reclaimed), d(s.ExpiredUnfetched, base.ExpiredUnfetched)
	out.CmdGet, out.GetHits, out.GetMisses = d(s.CmdGet, base.CmdGet), d(s.GetHits, base.GetHits), d(s.GetMisses, base.GetMisses)
	out.GetExpired, out.GetFlushed = d(s.GetExpired, base.GetExpired), d(s.GetFlushed, base.GetFlushed)
	out.CmdTouch, out.TouchHits, out.TouchMisses = d(s.CmdTouch, base.CmdTouch), d(s.TouchHits, base.TouchHits), d(s.TouchMisses, base.TouchMisses)
	out.CmdSet, out.CasHits, out.CasMisses, out.CasBadval = d(s.CmdSet, base.CmdSet), d(s.CasHits, base.CasHits), d(s.CasMisses, base.CasMisses), d(s.CasBadval, base.CasBadval)
	out.StoreTooLarge, out.StoreNoMemory = d(s.StoreTooLarge, base.StoreTooLarge), d(s.StoreNoMemory, base.StoreNoMemory)
	out.DeleteHits, out.DeleteMisses = d(s.DeleteHits, base.DeleteHits), d(s.DeleteMisses, base.DeleteMisses)
	out.IncrHits, out.IncrMisses = d(s.IncrHits, base.IncrHits), d(s.IncrMisses, base.IncrMisses)
	out.DecrHits, out.DecrMisses = d(s.DecrHits, base.DecrHits), d(s.DecrMisses, base.DecrMisses)
	out.CmdFlush = d(s.CmdFlush, base.CmdFlush)
	return out
}

// TierStats is the store as a tier reports itself: the counters the
// admin API shows (curr_items, bytes, limit_maxbytes, evictions,
// total_items) and its usage.
func (s *Store) TierStats() tiers.Stats {
	st := s.Stats()
	return tiers.Stats{
		Counters: map[string]uint64{
			"curr_items": st.CurrItems, "bytes": st.Bytes, "limit_maxbytes": st.LimitMaxBytes,
			"evictions": st.Evictions, "total_items": st.TotalItems,
		},
		Usage:    tiers.Usage{Items: st.CurrItems, Bytes: st.Bytes, LimitBytes: st.LimitMaxBytes, Evictions: st.Evictions},
		HasUsage: true,
	}
}

// AppendTierStats appends the store's own lines of strata's stats reply,
// each name after prefix (e.g. "strata_l1_").
func (s *Store) AppendTierStats(dst []byte, prefix string) []byte {
	st := s.Stats()
	for _, kv := range []struct {
		name string
		v    uint64
	}{
		{"curr_items", st.CurrItems}, {"total_items", st.TotalItems}, {"bytes", st.Bytes},
		{"limit_maxbytes", st.LimitMaxBytes}, {"evictions", st.Evictions}, {"reclaimed", st.Reclaimed},
	} {
		dst = appendStat(dst, prefix+kv.name, kv.v)
	}
	return dst
}
