package embedded

import (
	"math"
	"strconv"

	"github.com/cespare/xxhash/v2"

	"github.com/strata-cache/strata/tiers"
)

// arith is ma, incr and decr, after memcached's do_add_delta.
//
// Two memcached behaviours are reproduced on purpose because a later get
// shows them:
//   - When the new number has no more digits than the stored value, the
//     value is rewritten in place and padded with spaces to its old length
//     ("100" decremented by 95 reads back as "5  ").
//   - Otherwise a new item replaces the old one, and ma's T flag lands on
//     the discarded item: the reply reports the requested TTL while the
//     stored item keeps its old expiry.
func (s *Store) arith(req *tiers.Request, res *tiers.Result) {
	var incr bool
	switch req.Mode {
	case tiers.ModeIncr, tiers.ModeSet: // the zero Mode is each kind's default
		incr = true
	case tiers.ModeDecr:
	default:
		invalid(res, "mode %d is not an arithmetic mode", req.Mode)
		return
	}
	now := s.now()
	h := xxhash.Sum64(req.Key)
	fl := s.flush.Load()
	sh := s.shardFor(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()

	var digits [20]byte
	i := sh.lookupLocked(req.Key, h, now, fl)
	if i == nilIdx {
		if !req.Vivify {
			if incr {
				sh.c.incrMisses++
			} else {
				sh.c.decrMisses++
			}
			res.Status = tiers.StatusMiss
			return
		}
		// The seed is stored as is, without applying the delta.
		dec := strconv.AppendUint(digits[:0], req.Initial, 10)
		exptime := exptimeAt(req.VivifyTTL, now)
		if req.HasTTL {
			exptime = exptimeAt(req.TTL, now)
		}
		s.storeLocked(sh, res, nil, req.Key, h, 0, exptime, keyBits(req), now, fl, dec)
		if res.Status == tiers.StatusStored {
			res.Value = append(res.Value[:0], dec...)
			res.Created = true
		}
		return
	}

	e := &sh.entries[i]
	v := e.value()
	if len(v) == 0 || itemTotal(int(e.klen), e.flags, len(v)) > chunkMax {
		res.Status = tiers.StatusNonNumeric
		return
	}
	// A zero compare CAS means "don't compare" here, as in memcached.
	if req.HasCompareCAS && req.CompareCAS != 0 && req.CompareCAS != e.cas {
		res.Status = tiers.StatusExists
		return
	}
	n, ok := parseNumber(v)
	if !ok {
		res.Status = tiers.StatusNonNumeric
		return
	}
	if incr {
		n += req.Delta // wraps modulo 2^64
		sh.c.incrHits++
	} else {
		n -= min(n, req.Delta) // floors at zero
		sh.c.decrHits++
	}
	dec := strconv.AppendUint(digits[:0], n, 10)

	if len(dec) <= len(v) {
		copy(v, dec)
		for j := len(dec); j < len(v); j++ {
			v[j] = ' '
		}
		e.cas = s.nextCAS()
		if req.HasTTL {
			e.exptime = exptimeAt(req.TTL, now)
		}
		sh.touchLocked(i, now)
		res.Status = tiers.StatusStored
		res.CAS = e.cas
		res.ClientFlags = e.flags
		res.TTL = ttlLeft(e.exptime, now)
		res.Size = len(v)
	} else {
		klen := int(e.klen)
		flags, exptime := e.flags, e.exptime
		reported := exptime
		if req.HasTTL {
			reported = exptimeAt(req.TTL, now)
		}
		if int64(klen+len(dec))+ItemOverhead > sh.budget {
			res.Status = tiers.StatusNoMemory
			return
		}
		data := make([]byte, klen+len(dec))
		copy(data[copy(data, e.key()):], dec)
		sh.unlinkLocked(i)
		s.linkLocked(sh, res, data, klen, h, flags, exptime, 0, now, fl)
		if res.Status != tiers.StatusStored {
			return
		}
		res.TTL = ttlLeft(reported, now)
	}
	res.Value = append(res.Value[:0], dec...)
}

// parseNumber reads a stored value the way memcached's safe_strtoull reads
// item data (which is always followed by CRLF): optional leading
// whitespace, an optional sign, decimal digits, then whitespace, a NUL or
// the end of the value. Out-of-range numbers fail. A minus sign is
// accepted by strtoull and negates modulo 2^64; memcached then rejects the
// result only if it would be negative as a signed number, so "-0" reads as
// 0 and "-1" fails.
func parseNumber(b []byte) (uint64, bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	start := i
	var n uint64
	overflow := false
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if n > (math.MaxUint64-d)/10 {
			overflow = true
		}
		n = n*10 + d
	}
	if i == start || overflow {
		return 0, false
	}
	if i < len(b) && !isSpace(b[i]) && b[i] != 0 {
		return 0, false
	}
	if neg {
		n = -n
	}
	// memcached searches the whole C string for the sign, stopping at the
	// first NUL; past the value it would read the CRLF and then memory it
	// does not own, which is taken here to hold no minus sign.
	if int64(n) < 0 && hasMinus(b) {
		return 0, false
	}
	return n, true
}

func hasMinus(b []byte) bool {
	for _, c := range b {
		switch c {
		case 0:
			return false
		case '-':
			return true
		}
	}
	return false
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}
