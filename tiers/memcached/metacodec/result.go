package metacodec

import (
	"bytes"
	"errors"

	"github.com/strata-cache/strata/tiers"
)

// ErrUnexpected means a well-formed reply that cannot answer the request
// it was matched with (an EN for an ms, say). Replies are matched first in,
// first out, so the connection's pairing can no longer be trusted.
var ErrUnexpected = errors.New("metacodec: reply does not match the request")

// ReplyError is an error line the server sent that has no tiers.Status of
// its own: ERROR, or a CLIENT_ERROR or SERVER_ERROR other than the
// non-numeric, too-large and out-of-memory ones.
type ReplyError struct {
	Code Code
	Text string
}

func (e *ReplyError) Error() string {
	if e.Text == "" {
		return e.Code.String()
	}
	return e.Code.String() + " " + e.Text
}

// The error texts of memcached 1.6 that map onto statuses.
var (
	msgNonNumeric = []byte("cannot increment or decrement non-numeric value")
	msgTooLarge   = []byte("object too large for cache")
	msgNoMemory   = []byte("out of memory")
)

// Fill sets res from the reply rp to request req. It resets res first,
// keeping the capacity of res.Value, and copies a value into it, so res
// does not alias rp's buffer. It returns ErrUnexpected, or a *ReplyError
// for an error line without a status of its own; res.Status is then
// StatusError and the caller supplies res.Err.
func Fill(res *tiers.Result, req *tiers.Request, rp *Reply) error {
	res.Reset()
	switch rp.Code {
	case CodeClientError:
		if req.Kind == tiers.KindArith && bytes.Equal(rp.Data, msgNonNumeric) {
			res.Status = tiers.StatusNonNumeric
			return nil
		}
		return replyError(res, rp)
	case CodeServerError:
		switch {
		case bytes.Equal(rp.Data, msgTooLarge):
			res.Status = tiers.StatusTooLarge
			return nil
		case containsFold(rp.Data, msgNoMemory):
			res.Status = tiers.StatusNoMemory
			return nil
		}
		return replyError(res, rp)
	case CodeError:
		return replyError(res, rp)
	}

	var ok bool
	switch req.Kind {
	case tiers.KindGet:
		switch rp.Code {
		case CodeVA, CodeHD:
			res.Status, ok = tiers.StatusHit, true
			fillItem(res, rp)
		case CodeEN:
			res.Status, ok = tiers.StatusMiss, true
		}
	case tiers.KindSet:
		res.Status, ok = storeStatus(rp.Code, tiers.StatusNotFound)
		if ok && rp.Has&HasCAS != 0 {
			res.CAS = rp.CAS
		}
	case tiers.KindDelete:
		res.Status, ok = storeStatus(rp.Code, tiers.StatusMiss)
	case tiers.KindArith:
		if rp.Code == CodeVA {
			res.Status, ok = tiers.StatusStored, true
		} else {
			res.Status, ok = storeStatus(rp.Code, tiers.StatusMiss)
		}
		if ok && res.Status == tiers.StatusStored {
			fillItem(res, rp)
		}
	case tiers.KindFlush:
		res.Status, ok = tiers.StatusStored, rp.Code == CodeOK
	}
	if !ok {
		res.Reset()
		res.Status = tiers.StatusError
		return ErrUnexpected
	}
	return nil
}

// storeStatus maps the codes of ms, md and ma. nf is what NF means for the
// command: NOT_FOUND of a CAS store, or a plain miss of md and ma.
func storeStatus(c Code, nf tiers.Status) (tiers.Status, bool) {
	switch c {
	case CodeHD:
		return tiers.StatusStored, true
	case CodeNS:
		return tiers.StatusNotStored, true
	case CodeEX:
		return tiers.StatusExists, true
	case CodeNF:
		return nf, true
	}
	return tiers.StatusError, false
}

func fillItem(res *tiers.Result, rp *Reply) {
	if rp.Code == CodeVA {
		res.Value = append(res.Value[:0], rp.Data...)
		res.Size = len(rp.Data)
	}
	if rp.Has&HasTTL != 0 {
		res.TTL = rp.TTL
	}
	if rp.Has&HasCAS != 0 {
		res.CAS = rp.CAS
	}
	if rp.Has&HasFlags != 0 {
		res.ClientFlags = rp.ClientFlags
	}
	if rp.Has&HasSize != 0 {
		res.Size = rp.Size
	}
	if rp.Has&HasLastAccess != 0 {
		res.LastAccess = rp.LastAccess
	}
	res.Fetched = rp.Fetched
	res.Win, res.Stale, res.AlreadyWon = rp.Win, rp.Stale, rp.AlreadyWon
	res.KeyBinary = rp.KeyBinary
}

func replyError(res *tiers.Result, rp *Reply) error {
	res.Status = tiers.StatusError
	return &ReplyError{Code: rp.Code, Text: string(rp.Data)}
}

// containsFold reports whether s contains the lower-case ASCII sub,
// ignoring the case of s (memcached spells "Out of memory" both ways).
func containsFold(s, sub []byte) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for ; j < len(sub); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}
