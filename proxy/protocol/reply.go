package protocol

import (
	"errors"
	"strconv"

	"github.com/strata-cache/strata/tiers"
)

// Replies spelt exactly as memcached 1.6.18 spells them. The parser hands
// these out as Command.Reply, so they are capped slices: appending to one
// copies instead of writing into its neighbour.
var (
	rError          = reply("ERROR")
	rBadFormat      = reply("CLIENT_ERROR bad command line format")
	rBadExptime     = reply("CLIENT_ERROR invalid exptime argument")
	rBadDelta       = reply("CLIENT_ERROR invalid numeric delta argument")
	rBadChunk       = reply("CLIENT_ERROR bad data chunk")
	rDeleteUsage    = reply("CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]")
	rFlushDisabled  = reply("CLIENT_ERROR flush_all not allowed")
	rTooLarge       = reply("SERVER_ERROR object too large for cache")
	rShutdown       = reply("ERROR: shutdown not enabled")
	rDupFlag        = reply("CLIENT_ERROR duplicate flag")
	rInvalidFlag    = reply("CLIENT_ERROR invalid flag")
	rInvalidOrDup   = reply("CLIENT_ERROR invalid or duplicate flag")
	rDecodeKey      = reply("CLIENT_ERROR error decoding key")
	rBadToken       = reply("CLIENT_ERROR bad token in command line format")
	rMLength        = reply("CLIENT_ERROR incorrect length for M token")
	rBadInitial     = reply("CLIENT_ERROR invalid numeric initial value")
	rBadDeltaMeta   = reply("CLIENT_ERROR invalid numeric delta value")
	rOpaqueTooLong  = reply("CLIENT_ERROR opaque token too long")
	rFlagsTooLong   = reply("CLIENT_ERROR options flags too long")
	rFlagsTooLongMG = reply("CLIENT_ERROR options flags are too long")
	rInvalidModeMS  = reply("CLIENT_ERROR invalid mode for ms M token")
	rInvalidModeMA  = reply("CLIENT_ERROR invalid mode for ma M token")
	rEN             = reply("EN")
)

func reply(s string) []byte {
	b := []byte(s + "\r\n")
	return b[:len(b):len(b)]
}

// Status texts that depend on a tier's answer rather than on the request.
const (
	sNoMemoryStore = "SERVER_ERROR out of memory storing object"
	sNoMemory      = "SERVER_ERROR out of memory"
	sNonNumeric    = "CLIENT_ERROR cannot increment or decrement non-numeric value"
	sTooLarge      = "SERVER_ERROR object too large for cache"
	sServerError   = "SERVER_ERROR "
	crlf           = "\r\n"
	// maxReasonLen caps the reason of a SERVER_ERROR, so a tier's long
	// error text cannot produce a line a client refuses.
	maxReasonLen = 200
)

// AppendReply appends c's reply to dst; res[i] is the Result of c.Reqs[i]
// (a missing Result reads as an internal error). It writes nothing where
// memcached writes nothing: text noreply, and in meta quiet mode the
// nominal answers (EN of mg, HD of ms/md, HD/VA of ma). Errors are always
// written in meta quiet mode, as memcached does.
//
// A multi-key get that met a StatusError on any key answers with that one
// SERVER_ERROR line only: the client then sees one well-formed error
// rather than a partial list.
func (c *Command) AppendReply(dst []byte, res []tiers.Result) []byte {
	if c.bin.on {
		return c.appendBinary(dst, res)
	}
	switch c.Op {
	case OpNone, OpQuit, OpStats:
		return dst
	case OpError, OpMetaDebug, OpAuth:
		return append(dst, c.Reply...)
	case OpMetaNoop:
		return append(dst, "MN\r\n"...)
	case OpVersion:
		dst = append(dst, "VERSION "...)
		if len(res) > 0 {
			dst = append(dst, res[0].Value...)
		}
		return append(dst, crlf...)
	case OpVerbosity:
		if c.NoReply {
			return dst
		}
		return append(dst, "OK\r\n"...)
	case OpGet, OpGets, OpGat, OpGats:
		return c.appendValues(dst, res)
	case OpMetaGet:
		return c.appendMetaGet(dst, result(res, 0))
	case OpMetaSet:
		return c.appendMetaSet(dst, result(res, 0))
	case OpMetaDelete:
		return c.appendMetaDelete(dst, result(res, 0))
	case OpMetaArith:
		return c.appendMetaArith(dst, result(res, 0))
	}
	r := result(res, 0)
	if c.NoReply {
		return dst
	}
	switch c.Op {
	case OpSet, OpAdd, OpReplace, OpAppend, OpPrepend, OpCas:
		return appendStore(dst, r)
	case OpDelete:
		return appendStatus(dst, r, "DELETED\r\n")
	case OpTouch:
		return appendStatus(dst, r, "TOUCHED\r\n")
	case OpFlushAll:
		return appendStatus(dst, r, "OK\r\n")
	case OpIncr, OpDecr:
		switch r.Status {
		case tiers.StatusStored, tiers.StatusHit:
			dst = append(dst, r.Value...)
			return append(dst, crlf...)
		case tiers.StatusNonNumeric:
			return append(dst, sNonNumeric+crlf...)
		case tiers.StatusNoMemory:
			return append(dst, sNoMemory+crlf...)
		}
		return appendStatus(dst, r, "")
	}
	return dst
}

// missingResult stands for a Result the caller did not supply.
var missingResult = tiers.Result{Status: tiers.StatusError, Err: errMissingResult}

type internalError string

func (e internalError) Error() string { return string(e) }

const errMissingResult = internalError("proxy error: no result for request")

func result(res []tiers.Result, i int) *tiers.Result {
	if i < len(res) {
		return &res[i]
	}
	return &missingResult
}

// appendStatus spells the answers common to text commands: ok for a
// success, NOT_FOUND, EXISTS, and the errors.
func appendStatus(dst []byte, r *tiers.Result, ok string) []byte {
	switch r.Status {
	case tiers.StatusHit, tiers.StatusStored:
		return append(dst, ok...)
	case tiers.StatusMiss, tiers.StatusNotFound:
		return append(dst, "NOT_FOUND\r\n"...)
	case tiers.StatusExists:
		return append(dst, "EXISTS\r\n"...)
	case tiers.StatusNotStored:
		return append(dst, "NOT_STORED\r\n"...)
	case tiers.StatusTooLarge:
		return append(dst, sTooLarge+crlf...)
	case tiers.StatusNoMemory:
		return append(dst, sNoMemoryStore+crlf...)
	case tiers.StatusNonNumeric:
		return append(dst, sNonNumeric+crlf...)
	}
	return appendServerError(dst, r)
}

func appendStore(dst []byte, r *tiers.Result) []byte {
	return appendStatus(dst, r, "STORED\r\n")
}

// appendServerError writes "SERVER_ERROR <reason>" from r.Err, or
// "CLIENT_ERROR <reason>" when r.Err is a tiers.ClientError, with line
// breaks and other control bytes turned into spaces so the reason stays
// one line.
func appendServerError(dst []byte, r *tiers.Result) []byte {
	var ce tiers.ClientError
	if errors.As(r.Err, &ce) {
		dst = append(dst, "CLIENT_ERROR "...)
	} else {
		dst = append(dst, sServerError...)
	}
	reason := "unknown error"
	if r.Err != nil {
		reason = r.Err.Error()
	}
	if len(reason) > maxReasonLen {
		reason = reason[:maxReasonLen]
	}
	for i := 0; i < len(reason); i++ {
		b := reason[i]
		if b < ' ' || b == 0x7f {
			b = ' '
		}
		dst = append(dst, b)
	}
	return append(dst, crlf...)
}

// appendValues writes the VALUE lines of a get-family command and END.
//
// The pieces of a long line answer in turn, and only the last writes END
// (or the error the parser found for the whole line, in Reply). A
// SERVER_ERROR ends the reply for the client, so after one piece wrote it
// the later pieces of the line write nothing.
func (c *Command) appendValues(dst []byte, res []tiers.Result) []byte {
	if lr := c.line; lr != nil {
		if c.first {
			lr.failed = false
		}
		if lr.failed {
			return dst
		}
	}
	for i := range c.Reqs {
		if r := result(res, i); r.Status == tiers.StatusError {
			if c.line != nil {
				c.line.failed = true
			}
			return appendServerError(dst, r)
		}
	}
	withCAS := c.Op == OpGets || c.Op == OpGats
	for i := range c.Reqs {
		r := result(res, i)
		if r.Status != tiers.StatusHit {
			continue
		}
		dst = append(dst, "VALUE "...)
		dst = append(dst, c.Reqs[i].Key...)
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, uint64(r.ClientFlags), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, uint64(len(r.Value)), 10)
		if withCAS {
			dst = append(dst, ' ')
			dst = strconv.AppendUint(dst, r.CAS, 10)
		}
		dst = append(dst, crlf...)
		dst = append(dst, r.Value...)
		dst = append(dst, crlf...)
	}
	switch {
	case c.more:
		return dst
	case c.Reply != nil:
		return append(dst, c.Reply...)
	}
	return append(dst, "END\r\n"...)
}

// MemcachedVersion is the memcached release whose protocol strata speaks,
// and what it answers to version.
const MemcachedVersion = "1.6.18"

// AppendVersion appends "VERSION <v>\r\n".
func AppendVersion(dst []byte, v string) []byte {
	dst = append(dst, "VERSION "...)
	dst = append(dst, v...)
	return append(dst, crlf...)
}

// AppendStatString appends "STAT <name> <value>\r\n".
func AppendStatString(dst []byte, name, value string) []byte {
	dst = append(dst, "STAT "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = append(dst, value...)
	return append(dst, crlf...)
}

// AppendStatUint appends "STAT <name> <value>\r\n" for a counter.
func AppendStatUint(dst []byte, name string, value uint64) []byte {
	dst = append(dst, "STAT "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, value, 10)
	return append(dst, crlf...)
}

// AppendStatInt appends "STAT <name> <value>\r\n" for a signed value.
func AppendStatInt(dst []byte, name string, value int64) []byte {
	dst = append(dst, "STAT "...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, value, 10)
	return append(dst, crlf...)
}

// AppendError appends memcached's "ERROR\r\n", its answer to an unknown
// command (and to a stats subcommand it does not have).
func AppendError(dst []byte) []byte { return append(dst, rError...) }

// AppendEnd appends the "END\r\n" that closes a stats listing.
func AppendEnd(dst []byte) []byte { return append(dst, "END\r\n"...) }
