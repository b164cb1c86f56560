package embedded

import (
	"github.com/cespare/xxhash/v2"

	"github.com/strata-cache/strata/tiers"
)

// get is mg, and with it get, gets, gat, gats and touch.
//
// memcached applies mg's flags in the order the client wrote them; this
// store applies the item-changing ones first (N, then T, then R) and reports
// afterwards, which is what memcached does when they come before t and the
// other reporting flags, as clients normally send them.
func (s *Store) get(req *tiers.Request, res *tiers.Result) {
	now := s.now()
	h := xxhash.Sum64(req.Key)
	fl := s.flush.Load()
	sh := s.shardFor(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()

	i := sh.lookupLocked(req.Key, h, now, fl)
	created := false
	if i == nilIdx && req.Vivify {
		i = s.vivifyLocked(sh, req.Key, h, exptimeAt(req.VivifyTTL, now), now, fl, keyBits(req))
		created = i != nilIdx
	}
	if i == nilIdx {
		// mg counts a miss as a get even with T; touch and gat count it as
		// a touch.
		if req.HasTTL && req.Text {
			sh.c.cmdTouch++
			sh.c.touchMisses++
		} else {
			sh.c.cmdGet++
			sh.c.getMisses++
		}
		res.Status = tiers.StatusMiss
		return
	}

	e := &sh.entries[i]
	won := created
	if req.HasTTL {
		e.exptime = exptimeAt(req.TTL, now)
	}
	if req.Recache && !created && e.bits&bitTokenSent == 0 {
		// R wins when the item expires before the threshold would; R0 and
		// items without expiry never win.
		if at := exptimeAt(req.RecacheTTL, now); at != 0 && e.exptime != 0 && e.exptime < at {
			won = true
		}
	}

	res.Status = tiers.StatusHit
	res.ClientFlags = e.flags
	res.CAS = e.cas
	res.TTL = ttlLeft(e.exptime, now)
	res.Size = len(e.data) - int(e.klen)
	// h and l describe the item as it was before this request.
	res.Fetched = e.bits&bitFetched != 0
	res.LastAccess = now - e.atime
	res.AlreadyWon = e.bits&bitTokenSent != 0
	res.KeyBinary = e.bits&bitKeyBinary != 0
	// A stale item hands its win token to the first mg that sees it; text
	// gets take no part in the token protocol.
	if e.bits&bitStale != 0 {
		res.Stale = true
		if !res.AlreadyWon && !req.Text {
			won = true
		}
	}
	if won {
		res.Win = true
		e.bits |= bitTokenSent
	}
	if req.WantValue {
		res.Value = append(res.Value[:0], e.value()...)
	}
	if !req.NoBump {
		sh.bumpLocked(i, now)
	}
	if req.HasTTL {
		sh.c.cmdTouch++
		sh.c.touchHits++
	} else {
		sh.c.cmdGet++
		sh.c.getHits++
	}
}

// vivifyLocked creates the empty placeholder item of mg N. It returns nilIdx
// if there is no room, which memcached reports as a plain miss.
func (s *Store) vivifyLocked(sh *shard, key []byte, h uint64, exptime, now int64, fl *flushState, bits uint8) int32 {
	if !sh.makeRoomLocked(int64(len(key))+ItemOverhead, now, fl) {
		return nilIdx
	}
	data := make([]byte, len(key))
	copy(data, key)
	return sh.insertLocked(data, len(key), h, 0, exptime, now, s.nextCAS(), bits)
}

// delete is md and delete. With Invalidate the item stays, marked stale
// under a new CAS, so the next mg hands out a win token; with HasTTL its
// expiry moves too.
func (s *Store) delete(req *tiers.Request, res *tiers.Result) {
	now := s.now()
	h := xxhash.Sum64(req.Key)
	fl := s.flush.Load()
	sh := s.shardFor(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()

	i := sh.lookupLocked(req.Key, h, now, fl)
	if i == nilIdx {
		sh.c.deleteMisses++
		res.Status = tiers.StatusMiss
		return
	}
	e := &sh.entries[i]
	// Unlike the store and arithmetic paths, md compares even a zero CAS,
	// which therefore never matches.
	if req.HasCompareCAS && e.cas != req.CompareCAS {
		sh.c.deleteMisses++
		res.Status = tiers.StatusExists
		return
	}
	res.Status = tiers.StatusStored
	if !req.Invalidate {
		sh.c.deleteHits++
		sh.unlinkLocked(i)
		return
	}
	if req.HasTTL {
		e.exptime = exptimeAt(req.TTL, now)
	}
	e.bits |= bitStale
	e.bits &^= bitTokenSent
	e.cas = s.nextCAS()
	res.CAS = e.cas
	res.ClientFlags = e.flags
	res.TTL = ttlLeft(e.exptime, now)
	res.Size = len(e.data) - int(e.klen)
}
