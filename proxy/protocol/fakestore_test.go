package protocol

import (
	"strconv"

	"github.com/strata-cache/strata/tiers"
)

// fakeStore answers Requests with memcached's item semantics, enough for
// the differential tests to compare whole reply streams. Time stands
// still: a negative TTL expires an item at once, any other keeps it.
type fakeStore struct {
	items map[string]*fakeItem
	cas   uint64
}

type fakeItem struct {
	value   []byte
	flags   uint32
	cas     uint64
	fetched bool
	won     bool  // a client was handed the win token (mg W)
	binary  bool  // created with a base64 key
	ttl     int64 // -1: never expires
}

func newFakeStore() *fakeStore { return &fakeStore{items: map[string]*fakeItem{}} }

func (s *fakeStore) do(reqs []tiers.Request) []tiers.Result {
	res := make([]tiers.Result, len(reqs))
	for i := range reqs {
		s.one(&reqs[i], &res[i])
	}
	return res
}

func (s *fakeStore) store(key []byte, it *fakeItem) {
	s.cas++
	it.cas = s.cas
	if it.ttl < -1 {
		delete(s.items, string(key))
		return
	}
	s.items[string(key)] = it
}

func ttlOf(t int64) int64 {
	switch {
	case t == 0:
		return -1
	case t < 0:
		return -2 // expired at once
	}
	return t
}

func (s *fakeStore) fill(r *tiers.Result, it *fakeItem) {
	r.Value = append(r.Value[:0], it.value...)
	r.ClientFlags = it.flags
	r.CAS = it.cas
	r.TTL = it.ttl
	r.Size = len(it.value)
	r.Fetched = it.fetched
	r.KeyBinary = it.binary
}

func (s *fakeStore) one(q *tiers.Request, r *tiers.Result) {
	it := s.items[string(q.Key)]
	switch q.Kind {
	case tiers.KindFlush:
		s.items = map[string]*fakeItem{}
		s.cas++ // memcached takes a CAS id to mark what the flush covers
		r.Status = tiers.StatusStored
	case tiers.KindGet:
		if it == nil {
			if q.Vivify {
				it = &fakeItem{ttl: ttlOf(q.VivifyTTL), won: true, binary: q.KeyBinary}
				s.store(q.Key, it)
				s.fill(r, it)
				r.Status, r.Win = tiers.StatusHit, true
				return
			}
			r.Status = tiers.StatusMiss
			return
		}
		s.fill(r, it)
		r.Status = tiers.StatusHit
		r.AlreadyWon = it.won
		if !q.NoBump {
			it.fetched = true
		}
		if q.HasTTL {
			it.ttl = ttlOf(q.TTL)
			if it.ttl < -1 {
				delete(s.items, string(q.Key))
			}
		}
	case tiers.KindSet:
		s.set(q, r, it)
	case tiers.KindDelete:
		switch {
		case it == nil:
			r.Status = tiers.StatusMiss
		case q.HasCompareCAS && q.CompareCAS != it.cas:
			r.Status = tiers.StatusExists
		default:
			delete(s.items, string(q.Key))
			r.Status = tiers.StatusStored
		}
	case tiers.KindArith:
		s.arith(q, r, it)
	}
}

func (s *fakeStore) set(q *tiers.Request, r *tiers.Result, it *fakeItem) {
	nv := &fakeItem{value: append([]byte{}, q.Value...), flags: q.ClientFlags, ttl: ttlOf(q.TTL), binary: q.KeyBinary}
	switch {
	case q.HasCompareCAS && (q.Mode == tiers.ModeSet || q.Mode == tiers.ModeReplace):
		if it == nil {
			r.Status = tiers.StatusNotFound
			return
		}
		if it.cas != q.CompareCAS {
			r.Status = tiers.StatusExists
			return
		}
	case q.Mode == tiers.ModeAdd:
		if it != nil {
			r.Status = tiers.StatusNotStored
			return
		}
	case q.Mode == tiers.ModeReplace:
		if it == nil {
			r.Status = tiers.StatusNotStored
			return
		}
	case q.Mode == tiers.ModeAppend || q.Mode == tiers.ModePrepend:
		if it == nil {
			r.Status = tiers.StatusNotStored
			return
		}
		if q.HasCompareCAS && q.CompareCAS != it.cas {
			r.Status = tiers.StatusExists
			return
		}
		nv.flags, nv.ttl = it.flags, it.ttl
		if q.Mode == tiers.ModeAppend {
			nv.value = append(append([]byte{}, it.value...), q.Value...)
		} else {
			nv.value = append(append([]byte{}, q.Value...), it.value...)
		}
	}
	s.store(q.Key, nv)
	r.Status = tiers.StatusStored
	r.CAS = nv.cas
}

func (s *fakeStore) arith(q *tiers.Request, r *tiers.Result, it *fakeItem) {
	if it == nil {
		if !q.Vivify {
			r.Status = tiers.StatusMiss
			return
		}
		it = &fakeItem{value: strconv.AppendUint(nil, q.Initial, 10), ttl: ttlOf(q.VivifyTTL), binary: q.KeyBinary}
		s.store(q.Key, it)
		s.fill(r, it)
		r.Status = tiers.StatusStored
		r.Created = true
		return
	}
	// memcached refuses an empty value before comparing CAS values.
	if len(it.value) == 0 {
		r.Status = tiers.StatusNonNumeric
		return
	}
	if q.HasCompareCAS && q.CompareCAS != it.cas {
		r.Status = tiers.StatusExists
		return
	}
	// memcached reads the number with strtoull, the data's \r\n ending it
	// as the end of our slice does, and refuses what does not parse.
	v, ok := parseUint64(it.value)
	if !ok {
		r.Status = tiers.StatusNonNumeric
		return
	}
	if q.Mode == tiers.ModeIncr {
		v += q.Delta
	} else if q.Delta > v {
		v = 0
	} else {
		v -= q.Delta
	}
	num := strconv.AppendUint(nil, v, 10)
	nv := &fakeItem{value: num, flags: it.flags, ttl: it.ttl}
	if len(num) < len(it.value) {
		// memcached rewrites a shorter number in place, padded with spaces.
		for len(nv.value) < len(it.value) {
			nv.value = append(nv.value, ' ')
		}
	}
	s.store(q.Key, nv)
	r.Status = tiers.StatusStored
	r.Value = append(r.Value[:0], num...)
	r.CAS = nv.cas
	r.TTL = nv.ttl
}
