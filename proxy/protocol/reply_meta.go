package protocol

import (
	"encoding/base64"
	"strconv"

	"github.com/strata-cache/strata/tiers"
)

// Meta replies: a two-letter code, then the return flags in the order the
// request gave them, each command printing only the flags it knows.

// appendKeyFlag writes " k<key>", base64 encoded and followed by " b" when
// the key arrived encoded.
func (c *Command) appendKeyFlag(dst []byte) []byte {
	return c.appendKeyFlagAs(dst, c.base64Key)
}

// appendKeyFlagAs writes the k flag for an item whose key was created
// base64 encoded (binary) or not: memcached echoes a hit's key the way the
// item was stored, whatever the request used.
func (c *Command) appendKeyFlagAs(dst []byte, binary bool) []byte {
	dst = append(dst, " k"...)
	if len(c.Reqs) == 0 {
		return dst
	}
	if !binary {
		return append(dst, c.Reqs[0].Key...)
	}
	dst = base64.StdEncoding.AppendEncode(dst, c.Reqs[0].Key)
	return append(dst, " b"...)
}

// appendOpaqueKey writes the O and k flags in request order: all that a
// miss, or a status without an item, echoes.
func (c *Command) appendOpaqueKey(dst []byte) []byte {
	for _, f := range c.MetaFlags() {
		switch f {
		case 'O':
			dst = append(dst, ' ')
			dst = append(dst, c.opaque...)
		case 'k':
			dst = c.appendKeyFlag(dst)
		}
	}
	return dst
}

// appendMetaHead writes the code of a meta reply that found its item:
// "VA <size>" when the value follows, "HD" otherwise.
func appendMetaHead(dst []byte, wantValue bool, r *tiers.Result) []byte {
	if wantValue {
		dst = append(dst, "VA "...)
		return strconv.AppendUint(dst, uint64(len(r.Value)), 10)
	}
	return append(dst, "HD"...)
}

func appendTTL(dst []byte, ttl int64) []byte {
	return strconv.AppendInt(dst, ttl, 10)
}

func (c *Command) appendMetaGet(dst []byte, r *tiers.Result) []byte {
	switch r.Status {
	case tiers.StatusHit:
	case tiers.StatusError:
		return appendServerError(dst, r)
	default:
		if c.NoReply {
			return dst
		}
		dst = append(dst, "EN"...)
		dst = c.appendOpaqueKey(dst)
		return append(dst, crlf...)
	}
	wantValue := len(c.Reqs) > 0 && c.Reqs[0].WantValue
	dst = appendMetaHead(dst, wantValue, r)
	for _, f := range c.MetaFlags() {
		switch f {
		case 's':
			size := r.Size
			if size == 0 {
				size = len(r.Value)
			}
			dst = append(dst, " s"...)
			dst = strconv.AppendUint(dst, uint64(size), 10)
		case 't':
			dst = append(dst, " t"...)
			dst = appendTTL(dst, r.TTL)
		case 'c':
			dst = append(dst, " c"...)
			dst = strconv.AppendUint(dst, r.CAS, 10)
		case 'f':
			dst = append(dst, " f"...)
			dst = strconv.AppendUint(dst, uint64(r.ClientFlags), 10)
		case 'l':
			dst = append(dst, " l"...)
			dst = strconv.AppendInt(dst, r.LastAccess, 10)
		case 'h':
			if r.Fetched {
				dst = append(dst, " h1"...)
			} else {
				dst = append(dst, " h0"...)
			}
		case 'O':
			dst = append(dst, ' ')
			dst = append(dst, c.opaque...)
		case 'k':
			dst = c.appendKeyFlagAs(dst, r.KeyBinary)
		}
	}
	// memcached prints Z before X before W, after the requested flags.
	if r.AlreadyWon {
		dst = append(dst, " Z"...)
	}
	if r.Stale {
		dst = append(dst, " X"...)
	}
	if r.Win {
		dst = append(dst, " W"...)
	}
	dst = append(dst, crlf...)
	if wantValue {
		dst = append(dst, r.Value...)
		dst = append(dst, crlf...)
	}
	return dst
}

func (c *Command) appendMetaSet(dst []byte, r *tiers.Result) []byte {
	switch r.Status {
	case tiers.StatusStored, tiers.StatusHit:
		if c.NoReply {
			return dst
		}
		dst = append(dst, "HD"...)
	case tiers.StatusNotStored:
		dst = append(dst, "NS"...)
	case tiers.StatusExists:
		dst = append(dst, "EX"...)
	case tiers.StatusNotFound, tiers.StatusMiss:
		dst = append(dst, "NF"...)
	case tiers.StatusTooLarge:
		return append(dst, sTooLarge+crlf...)
	case tiers.StatusNoMemory:
		return append(dst, sNoMemoryStore+crlf...)
	default:
		return appendServerError(dst, r)
	}
	for _, f := range c.MetaFlags() {
		switch f {
		case 'O':
			dst = append(dst, ' ')
			dst = append(dst, c.opaque...)
		case 'k':
			dst = c.appendKeyFlag(dst)
		case 'c':
			dst = append(dst, " c"...)
			dst = strconv.AppendUint(dst, r.CAS, 10)
		}
	}
	return append(dst, crlf...)
}

func (c *Command) appendMetaDelete(dst []byte, r *tiers.Result) []byte {
	switch r.Status {
	case tiers.StatusStored, tiers.StatusHit:
		if c.NoReply {
			return dst
		}
		dst = append(dst, "HD"...)
	case tiers.StatusExists:
		dst = append(dst, "EX"...)
	case tiers.StatusMiss, tiers.StatusNotFound:
		dst = append(dst, "NF"...)
	default:
		return appendServerError(dst, r)
	}
	dst = c.appendOpaqueKey(dst)
	return append(dst, crlf...)
}

func (c *Command) appendMetaArith(dst []byte, r *tiers.Result) []byte {
	switch r.Status {
	case tiers.StatusStored, tiers.StatusHit:
	case tiers.StatusMiss, tiers.StatusNotFound:
		dst = append(dst, "NF"...)
		dst = c.appendOpaqueKey(dst)
		return append(dst, crlf...)
	case tiers.StatusExists:
		dst = append(dst, "EX"...)
		dst = c.appendOpaqueKey(dst)
		return append(dst, crlf...)
	case tiers.StatusNonNumeric:
		return append(dst, sNonNumeric+crlf...)
	case tiers.StatusNoMemory:
		return append(dst, sNoMemory+crlf...)
	default:
		return appendServerError(dst, r)
	}
	if c.NoReply && !r.Created {
		return dst
	}
	wantValue := len(c.Reqs) > 0 && c.Reqs[0].WantValue
	dst = appendMetaHead(dst, wantValue, r)
	for _, f := range c.MetaFlags() {
		switch f {
		case 'c':
			dst = append(dst, " c"...)
			dst = strconv.AppendUint(dst, r.CAS, 10)
		case 't':
			dst = append(dst, " t"...)
			dst = appendTTL(dst, r.TTL)
		case 'O':
			dst = append(dst, ' ')
			dst = append(dst, c.opaque...)
		case 'k':
			dst = c.appendKeyFlag(dst)
		}
	}
	dst = append(dst, crlf...)
	if wantValue {
		dst = append(dst, r.Value...)
		dst = append(dst, crlf...)
	}
	return dst
}
