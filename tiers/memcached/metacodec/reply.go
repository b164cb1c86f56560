package metacodec

import (
	"bytes"
	"errors"
)

// Code is the kind of a reply line.
type Code uint8

const (
	CodeNone        Code = iota
	CodeVA               // VA <size> <flags>*, then <size> bytes and \r\n
	CodeHD               // HD <flags>*: success without a value
	CodeEN               // EN: mg miss
	CodeNS               // NS: not stored
	CodeEX               // EX: CAS mismatch
	CodeNF               // NF: not found
	CodeMN               // MN: meta no-op
	CodeOK               // OK: flush_all
	CodeVersion          // VERSION <text>
	CodeError            // ERROR [<text>]: unknown command
	CodeClientError      // CLIENT_ERROR <text>
	CodeServerError      // SERVER_ERROR <text>
)

var codeNames = [...]string{"none", "VA", "HD", "EN", "NS", "EX", "NF", "MN", "OK", "VERSION", "ERROR", "CLIENT_ERROR", "SERVER_ERROR"}

func (c Code) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "unknown"
}

// Has bits say which return flags a reply carried.
const (
	HasTTL uint16 = 1 << iota
	HasCAS
	HasFlags
	HasSize
	HasFetched
	HasLastAccess
)

// Reply is one parsed reply. Data aliases the parsed buffer: the value of
// VA, the text of VERSION, or the message of an error line.
type Reply struct {
	Code Code
	Data []byte

	Has         uint16 // HasTTL | HasCAS | ...
	TTL         int64  // t: remaining seconds, -1 for never
	CAS         uint64 // c
	ClientFlags uint32 // f
	Size        int    // s
	Fetched     bool   // h1
	LastAccess  int64  // l
	Win         bool   // W
	Stale       bool   // X
	AlreadyWon  bool   // Z
	KeyBinary   bool   // b: the returned key (k) is base64 of a binary key
}

// MaxLine bounds a reply line. memcached's meta reply lines are a few
// dozen bytes (a returned key and opaque add at most ~300); a longer line
// means the stream is not what we think it is.
const MaxLine = 4096

// ErrMalformed means the bytes are not a memcached reply: the connection
// has lost its framing and must be closed.
var ErrMalformed = errors.New("metacodec: malformed reply")

// ParseReply parses the first reply in buf into r. It returns the bytes
// the reply takes, 0 if buf holds only part of it (nothing is consumed; call
// again with more bytes), or ErrMalformed. A VA value longer than maxValue
// is malformed: we never asked for one.
//
// Invariant: for any prefix buf[:k] of a buffer on which ParseReply
// returns n > 0, it returns 0 or the same n, and never an error.
func ParseReply(buf []byte, maxValue int, r *Reply) (int, error) {
	limit := min(len(buf), MaxLine)
	nl := bytes.IndexByte(buf[:limit], '\n')
	if nl < 0 {
		if len(buf) >= MaxLine {
			return 0, ErrMalformed
		}
		// Even a partial line must start like a reply, so garbage is
		// caught now rather than after MaxLine bytes.
		if !plausiblePrefix(buf) {
			return 0, ErrMalformed
		}
		return 0, nil
	}
	if nl == 0 || buf[nl-1] != '\r' {
		return 0, ErrMalformed
	}
	line := buf[:nl-1]
	n := nl + 1
	*r = Reply{}
	if len(line) < 2 {
		return 0, ErrMalformed
	}
	var rest []byte
	switch {
	case isCode(line, "VA"):
		r.Code = CodeVA
		size, after, ok := number(line[2:])
		if !ok || size > uint64(maxValue) {
			return 0, ErrMalformed
		}
		if err := parseFlags(after, r); err != nil {
			return 0, err
		}
		end := n + int(size) + 2
		if len(buf) < end {
			if len(buf) > n+int(size) && buf[n+int(size)] != '\r' {
				return 0, ErrMalformed
			}
			return 0, nil
		}
		if buf[end-2] != '\r' || buf[end-1] != '\n' {
			return 0, ErrMalformed
		}
		r.Data = buf[n : end-2]
		return end, nil
	case isCode(line, "HD"):
		r.Code, rest = CodeHD, line[2:]
	case isCode(line, "EN"):
		r.Code, rest = CodeEN, line[2:]
	case isCode(line, "NS"):
		r.Code, rest = CodeNS, line[2:]
	case isCode(line, "EX"):
		r.Code, rest = CodeEX, line[2:]
	case isCode(line, "NF"):
		r.Code, rest = CodeNF, line[2:]
	case isCode(line, "MN"):
		r.Code, rest = CodeMN, line[2:]
	case string(line) == "OK":
		r.Code = CodeOK
		return n, nil
	case bytes.HasPrefix(line, []byte("VERSION ")):
		r.Code, r.Data = CodeVersion, line[len("VERSION "):]
		return n, nil
	case string(line) == "ERROR":
		r.Code = CodeError
		return n, nil
	case bytes.HasPrefix(line, []byte("ERROR ")):
		r.Code, r.Data = CodeError, line[len("ERROR "):]
		return n, nil
	case bytes.HasPrefix(line, []byte("CLIENT_ERROR ")):
		r.Code, r.Data = CodeClientError, line[len("CLIENT_ERROR "):]
		return n, nil
	case bytes.HasPrefix(line, []byte("SERVER_ERROR ")):
		r.Code, r.Data = CodeServerError, line[len("SERVER_ERROR "):]
		return n, nil
	default:
		return 0, ErrMalformed
	}
	if err := parseFlags(rest, r); err != nil {
		return 0, err
	}
	return n, nil
}

// isCode reports whether line starts with a two-letter code followed by
// the end of the line or a space.
func isCode(line []byte, code string) bool {
	return line[0] == code[0] && line[1] == code[1] && (len(line) == 2 || line[2] == ' ')
}

// replyStarts lists how every reply line begins.
var replyStarts = [...]string{"VA ", "HD", "EN", "NS", "EX", "NF", "MN", "OK", "VERSION ", "ERROR", "CLIENT_ERROR ", "SERVER_ERROR "}

// plausiblePrefix reports whether an unterminated line could still become
// a reply.
func plausiblePrefix(b []byte) bool {
	for _, s := range replyStarts {
		k := min(len(b), len(s))
		if string(b[:k]) == s[:k] {
			return true
		}
	}
	return false
}

// number reads " <decimal>" at the start of b and returns the rest.
func number(b []byte) (uint64, []byte, bool) {
	if len(b) < 2 || b[0] != ' ' {
		return 0, nil, false
	}
	b = b[1:]
	var v uint64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if v > (1<<63)/10 {
			return 0, nil, false
		}
		v = v*10 + uint64(b[i]-'0')
	}
	if i == 0 || (i < len(b) && b[i] != ' ') {
		return 0, nil, false
	}
	return v, b[i:], true
}

// parseFlags reads the return flags " <f><value>" of a reply line. Flags
// we never ask for (k, O, b) and unknown ones are skipped, so a newer
// server's additions do not break us; the values of the ones we use must
// be well formed.
func parseFlags(b []byte, r *Reply) error {
	for len(b) > 0 {
		if b[0] != ' ' {
			return ErrMalformed
		}
		b = b[1:]
		end := bytes.IndexByte(b, ' ')
		if end < 0 {
			end = len(b)
		}
		tok := b[:end]
		b = b[end:]
		if len(tok) == 0 {
			continue
		}
		v := tok[1:]
		var ok = true
		switch tok[0] {
		case 't':
			r.Has |= HasTTL
			r.TTL, ok = signed(v)
		case 'c':
			r.Has |= HasCAS
			r.CAS, ok = unsigned(v, 1<<64-1)
		case 'f':
			r.Has |= HasFlags
			var f uint64
			f, ok = unsigned(v, 1<<32-1)
			r.ClientFlags = uint32(f)
		case 's':
			r.Has |= HasSize
			var s uint64
			s, ok = unsigned(v, 1<<62)
			r.Size = int(s)
		case 'h':
			r.Has |= HasFetched
			ok = len(v) == 1 && (v[0] == '0' || v[0] == '1')
			r.Fetched = ok && v[0] == '1'
		case 'l':
			r.Has |= HasLastAccess
			r.LastAccess, ok = signed(v)
		case 'W':
			r.Win = true
		case 'X':
			r.Stale = true
		case 'Z':
			r.AlreadyWon = true
		case 'b':
			r.KeyBinary = true
		}
		if !ok {
			return ErrMalformed
		}
	}
	return nil
}

func unsigned(b []byte, max uint64) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (max-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

func signed(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	v, ok := unsigned(b, 1<<63-1)
	if neg {
		return -int64(v), ok
	}
	return int64(v), ok
}
