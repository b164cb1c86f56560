package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/strata-cache/strata/tiers"
)

// The texts memcached puts in the body of an error response.
var binErrText = map[uint16]string{
	BinStatusNoMemory:       "Out of memory",
	BinStatusUnknownCommand: "Unknown command",
	BinStatusKeyNotFound:    "Not found",
	BinStatusInvalid:        "Invalid arguments",
	BinStatusKeyExists:      "Data exists for key.",
	BinStatusTooLarge:       "Too large.",
	BinStatusNonNumeric:     "Non-numeric server-side value for incr or decr",
	BinStatusNotStored:      "Not stored.",
	BinStatusAuthError:      "Auth failure.",
}

// appendBinHeader appends a response header that echoes c's opcode and
// opaque. The data type is always raw bytes.
func (c *Command) appendBinHeader(dst []byte, status uint16, extlen, keylen, bodylen int, cas uint64) []byte {
	var h [binHeaderLen]byte
	h[0] = binResMagic
	h[1] = c.bin.opcode
	binary.BigEndian.PutUint16(h[2:], uint16(keylen))
	h[4] = byte(extlen)
	binary.BigEndian.PutUint16(h[6:], status)
	binary.BigEndian.PutUint32(h[8:], uint32(bodylen))
	copy(h[12:16], c.bin.opaque[:])
	binary.BigEndian.PutUint64(h[16:], cas)
	return append(dst, h[:]...)
}

// appendBinError appends an error response whose body is text, or
// memcached's text for status when text is empty.
func (c *Command) appendBinError(dst []byte, status uint16, text string) []byte {
	if text == "" {
		text = binErrText[status]
	}
	dst = c.appendBinHeader(dst, status, 0, 0, len(text), 0)
	return append(dst, text...)
}

// binFail makes c a parser-decided error response. Requests already added
// (the delete a refused set carries) stay.
func (c *Command) binFail(status uint16, text []byte) {
	c.Op = OpError
	c.rbuf = c.appendBinError(c.rbuf[:0], status, string(text))
	c.Reply = c.rbuf
}

// appendBinary is AppendReply for a binary Command. Quiet commands answer
// nothing on success, and quiet gets nothing on a miss; errors always
// answer, as in memcached.
func (c *Command) appendBinary(dst []byte, res []tiers.Result) []byte {
	switch c.Op {
	case OpNone, OpStats:
		return dst
	case OpError, OpReply, OpQuit, OpAuth:
		return append(dst, c.Reply...)
	}
	r := result(res, 0)
	switch c.Op {
	case OpGet, OpGat, OpTouch:
		return c.appendBinGet(dst, r)
	case OpSet, OpAdd, OpReplace, OpAppend, OpPrepend, OpCas:
		if r.Status == tiers.StatusStored {
			if c.bin.quiet {
				return dst
			}
			return c.appendBinHeader(dst, BinStatusOK, 0, 0, 0, r.CAS)
		}
		if r.Status == tiers.StatusNotStored {
			// memcached reports a failed condition by the mode's cause.
			switch c.Op {
			case OpAdd:
				return c.appendBinError(dst, BinStatusKeyExists, "")
			case OpReplace:
				return c.appendBinError(dst, BinStatusKeyNotFound, "")
			}
		}
	case OpDelete, OpFlushAll:
		if r.Status == tiers.StatusStored || r.Status == tiers.StatusHit {
			if c.bin.quiet {
				return dst
			}
			return c.appendBinHeader(dst, BinStatusOK, 0, 0, 0, 0)
		}
	case OpIncr, OpDecr:
		if r.Status == tiers.StatusStored || r.Status == tiers.StatusHit {
			if c.bin.quiet {
				return dst
			}
			n, _ := strconv.ParseUint(string(bytes.TrimSpace(r.Value)), 10, 64)
			dst = c.appendBinHeader(dst, BinStatusOK, 0, 0, 8, r.CAS)
			return binary.BigEndian.AppendUint64(dst, n)
		}
	}
	return c.appendBinStatus(dst, r)
}

// appendBinGet answers get, getk, touch, gat and gatk: flags as extras,
// then the key (getk, gatk), then the value (not for touch).
func (c *Command) appendBinGet(dst []byte, r *tiers.Result) []byte {
	switch r.Status {
	case tiers.StatusHit:
	case tiers.StatusMiss, tiers.StatusNotFound:
		switch {
		case c.bin.quiet:
			return dst
		case c.bin.withKey:
			key := c.Reqs[0].Key
			dst = c.appendBinHeader(dst, BinStatusKeyNotFound, 0, len(key), len(key), 0)
			return append(dst, key...)
		}
		return c.appendBinError(dst, BinStatusKeyNotFound, "")
	default:
		return c.appendBinStatus(dst, r)
	}
	var key, value []byte
	if c.bin.withKey {
		key = c.Reqs[0].Key
	}
	if c.Op != OpTouch {
		value = r.Value
	}
	dst = c.appendBinHeader(dst, BinStatusOK, 4, len(key), 4+len(key)+len(value), r.CAS)
	dst = binary.BigEndian.AppendUint32(dst, r.ClientFlags)
	dst = append(dst, key...)
	return append(dst, value...)
}

// appendBinStatus spells the answers common to every command: the
// conditions that failed and the errors.
func (c *Command) appendBinStatus(dst []byte, r *tiers.Result) []byte {
	switch r.Status {
	case tiers.StatusMiss, tiers.StatusNotFound:
		return c.appendBinError(dst, BinStatusKeyNotFound, "")
	case tiers.StatusExists:
		return c.appendBinError(dst, BinStatusKeyExists, "")
	case tiers.StatusNotStored:
		return c.appendBinError(dst, BinStatusNotStored, "")
	case tiers.StatusTooLarge:
		return c.appendBinError(dst, BinStatusTooLarge, "")
	case tiers.StatusNoMemory:
		return c.appendBinError(dst, BinStatusNoMemory, "")
	case tiers.StatusNonNumeric:
		return c.appendBinError(dst, BinStatusNonNumeric, "")
	}
	// A tier failure: the reason as SERVER_ERROR would give it, on one
	// line and capped.
	status := BinStatusInternal
	var ce tiers.ClientError
	if errors.As(r.Err, &ce) {
		status = BinStatusInvalid
	}
	line := appendServerError(nil, r)
	line = line[:len(line)-len(crlf)]
	return c.appendBinError(dst, status, string(line))
}

// AppendBinaryStats appends the binary answer to a stat request whose text
// answer is text (what the proxy spells for "stats <args>"): one response
// per STAT line, keyed by the name, then the empty response that ends the
// listing. A text answer without STAT lines or END (an error, a usage
// text) answers as memcached does an unknown group: key not found.
func (c *Command) AppendBinaryStats(dst, text []byte) []byte {
	start := len(dst)
	for len(text) > 0 {
		line, rest, _ := bytes.Cut(text, []byte(crlf))
		text = rest
		switch {
		case bytes.HasPrefix(line, []byte("STAT ")):
			name, value, _ := bytes.Cut(line[len("STAT "):], []byte(" "))
			dst = c.appendBinHeader(dst, BinStatusOK, 0, len(name), len(name)+len(value), 0)
			dst = append(append(dst, name...), value...)
		case string(line) == "END", string(line) == "RESET", string(line) == "OK":
			return c.appendBinHeader(dst, BinStatusOK, 0, 0, 0, 0)
		default:
			return c.appendBinError(dst[:start], BinStatusKeyNotFound, "")
		}
	}
	return c.appendBinError(dst[:start], BinStatusKeyNotFound, "")
}
