package embedded

import (
	"github.com/cespare/xxhash/v2"

	"github.com/strata-cache/strata/tiers"
)

// casResult is how a request's compare CAS relates to the item it meets.
type casResult uint8

const (
	casNone  casResult = iota // no compare CAS, or a zero one
	casMatch                  // equal to the item's
	casStale                  // older than the item's, and Invalidate allows it
	casBad                    // anything else
)

// set is ms and the text storage commands. The outcome table follows
// memcached's do_store_item:
//
//	mode            item present                        item absent
//	Set             store                               store
//	Add             bump, NotStored                     store
//	Replace         store                               NotStored
//	Append/Prepend  CAS none|match: join, else Exists   NotStored (or vivify)
//	Set/Replace+CAS match: store; stale: store stale;   NotFound
//	                else Exists
func (s *Store) set(req *tiers.Request, res *tiers.Result) {
	mode := req.Mode
	if mode > tiers.ModePrepend {
		invalid(res, "mode %d is not a set mode", mode)
		return
	}
	now := s.now()
	h := xxhash.Sum64(req.Key)
	fl := s.flush.Load()
	sh := s.shardFor(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.c.cmdSet++
	kb := keyBits(req)

	klen, vlen := len(req.Key), len(req.Value)
	size := int64(klen+vlen) + ItemOverhead
	if tooLarge := itemTotal(klen, req.ClientFlags, vlen) > s.maxItem; tooLarge || size > sh.budget {
		if tooLarge {
			sh.c.storeTooLarge++
			res.Status = tiers.StatusTooLarge
		} else {
			sh.c.storeNoMemory++
			res.Status = tiers.StatusNoMemory
		}
		// memcached drops the old value when a store fails for size, so a
		// reader cannot keep seeing data the client meant to replace: for
		// ms in every mode, for the text protocol only on set (not cas).
		if !req.Text || (mode == tiers.ModeSet && !req.HasCompareCAS) {
			if i := sh.lookupLocked(req.Key, h, now, fl); i != nilIdx {
				sh.unlinkLocked(i)
			}
		}
		return
	}

	// A compare CAS turns set and replace into memcached's cas command.
	casMode := req.HasCompareCAS && (mode == tiers.ModeSet || mode == tiers.ModeReplace)

	i := sh.lookupLocked(req.Key, h, now, fl)
	if i == nilIdx {
		switch {
		case casMode:
			sh.c.casMisses++
			res.Status = tiers.StatusNotFound
		case mode == tiers.ModeSet || mode == tiers.ModeAdd:
			s.storeLocked(sh, res, nil, req.Key, h, req.ClientFlags, exptimeAt(req.TTL, now), kb, now, fl, req.Value)
		case (mode == tiers.ModeAppend || mode == tiers.ModePrepend) && req.Vivify && s.appendVivify:
			s.storeLocked(sh, res, nil, req.Key, h, req.ClientFlags, exptimeAt(req.VivifyTTL, now), kb, now, fl, req.Value)
		default:
			res.Status = tiers.StatusNotStored
		}
		return
	}

	e := &sh.entries[i]
	cr := compareCAS(req, e.cas, casMode)
	switch {
	case mode == tiers.ModeAdd:
		sh.touchLocked(i, now)
		res.Status = tiers.StatusNotStored

	case casMode:
		switch cr {
		case casMatch:
			sh.c.casHits++
			old := sh.unlinkLocked(i)
			s.storeLocked(sh, res, old, req.Key, h, req.ClientFlags, exptimeAt(req.TTL, now), kb, now, fl, req.Value)
		case casStale:
			// The value is taken but flagged stale; the item keeps its
			// expiry and whether a win token went out.
			sh.c.casHits++
			exptime, bits := e.exptime, bitStale|e.bits&bitTokenSent|kb
			old := sh.unlinkLocked(i)
			s.storeLocked(sh, res, old, req.Key, h, req.ClientFlags, exptime, bits, now, fl, req.Value)
		default:
			sh.c.casBadval++
			res.Status = tiers.StatusExists
		}

	case mode == tiers.ModeAppend || mode == tiers.ModePrepend:
		if cr != casNone && cr != casMatch {
			res.Status = tiers.StatusExists
			return
		}
		oldv := e.value()
		joined := len(oldv) + vlen
		if itemTotal(klen, e.flags, joined) > s.maxItem || int64(klen+joined)+ItemOverhead > sh.budget {
			// memcached cannot allocate the joined item and says NOT_STORED.
			res.Status = tiers.StatusNotStored
			return
		}
		data := make([]byte, klen+joined)
		copy(data, req.Key)
		if mode == tiers.ModeAppend {
			copy(data[klen+copy(data[klen:], oldv):], req.Value)
		} else {
			copy(data[klen+copy(data[klen:], req.Value):], oldv)
		}
		flags, exptime := e.flags, e.exptime
		sh.unlinkLocked(i)
		s.linkLocked(sh, res, data, klen, h, flags, exptime, 0, now, fl)

	default: // set or replace of a present item
		old := sh.unlinkLocked(i)
		s.storeLocked(sh, res, old, req.Key, h, req.ClientFlags, exptimeAt(req.TTL, now), kb, now, fl, req.Value)
	}
}

func compareCAS(req *tiers.Request, itemCAS uint64, casMode bool) casResult {
	switch {
	case !req.HasCompareCAS || req.CompareCAS == 0:
		return casNone
	case req.CompareCAS == itemCAS:
		return casMatch
	case casMode && req.Invalidate && req.CompareCAS < itemCAS:
		return casStale
	default:
		return casBad
	}
}

// storeLocked copies key and value into a buffer (old's, when it is the
// right size) and links it as a new item.
func (s *Store) storeLocked(sh *shard, res *tiers.Result, old, key []byte, h uint64, flags uint32, exptime int64, bits uint8, now int64, fl *flushState, value []byte) {
	data := bufferFor(old, len(key)+len(value))
	copy(data[copy(data, key):], value)
	s.linkLocked(sh, res, data, len(key), h, flags, exptime, bits, now, fl)
}

// linkLocked makes room for data and links it under a fresh CAS, reporting
// the stored item in res. The caller has checked data fits the budget.
func (s *Store) linkLocked(sh *shard, res *tiers.Result, data []byte, klen int, h uint64, flags uint32, exptime int64, bits uint8, now int64, fl *flushState) {
	if !sh.makeRoomLocked(int64(len(data))+ItemOverhead, now, fl) {
		sh.c.storeNoMemory++
		res.Status = tiers.StatusNoMemory
		return
	}
	cas := s.nextCAS()
	sh.insertLocked(data, klen, h, flags, exptime, now, cas, bits)
	res.Status = tiers.StatusStored
	res.CAS = cas
	res.ClientFlags = flags
	res.TTL = ttlLeft(exptime, now)
	res.Size = len(data) - klen
}
