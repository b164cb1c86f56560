// Package linkproto is what a region link adds to the memcached meta
// protocol: the opaque token that carries a forwarded request's location
// epoch or the source marker, and the wrong-owner refusal.
//
// A forwarding strata writes ordinary meta commands (mg, ms, md, ma) on a
// region link, with one opaque flag:
//
//	O e<epoch>   a request for a μ-shard routed with location epoch <epoch>
//	             (decimal, 1 to 2^64-1), spelt "Oe17"
//	O e<epoch>d<deadline>
//	             the same, for a write that its sender will have answered
//	             as failed at <deadline> (Unix milliseconds in lower-case
//	             hex, no leading zero), spelt "Oe17d19c6b0a4c2e": the
//	             receiver refuses the write once its clock is past it
//	O src        a read or delete of a migration's other side ("Osrc"):
//	             served from the receiver's local tiers without an
//	             ownership check
//
// Both fit memcached's 32-byte opaque limit, and the receiver echoes the
// token in its reply as memcached does, so a plain memcached client can
// talk to a link. A request with no token (or a token of another form) is
// a link request of epoch 0: the receiver checks ownership with its own
// view. A receiver that does not serve the μ-shard in its view answers
// "SERVER_ERROR wrong_owner".
//
// Nothing here allocates; Parse reads a borrowed token and keeps nothing.
package linkproto

import (
	"errors"
	"strconv"
)

// Token is what a link request's opaque token says.
type Token struct {
	// Epoch is the location epoch the sender routed with; 0 when absent.
	Epoch uint64
	// Source marks a read or delete of a migration's other side.
	Source bool
	// Deadline, with an Epoch, is the Unix millisecond after which the
	// receiver must not run the request (a write); 0 when absent.
	Deadline int64
}

// Late reports whether a request with token t must not run at nowMs, a
// Unix millisecond reading of the receiver's clock.
func (t Token) Late(nowMs int64) bool { return t.Deadline > 0 && nowMs > t.Deadline }

// maxToken is memcached's longest opaque token, counting its 'O'.
const maxToken = 32

// AppendToken appends the opaque flag for t, with its leading space
// (" Oe17", " Osrc"), or nothing for the zero Token.
func AppendToken(dst []byte, t Token) []byte {
	switch {
	case t.Source:
		return append(dst, " Osrc"...)
	case t.Epoch != 0:
		start := len(dst)
		dst = append(dst, " Oe"...)
		dst = strconv.AppendUint(dst, t.Epoch, 10)
		if t.Deadline > 0 {
			mark := len(dst)
			dst = append(dst, 'd')
			dst = strconv.AppendInt(dst, t.Deadline, 16)
			if len(dst)-start-1 > maxToken {
				dst = dst[:mark] // does not fit: no deadline
			}
		}
	}
	return dst
}

// Parse reads the whole O token of a command (with its 'O', as the proxy's
// parser keeps it); nil or a token of no known form yields the zero
// Token and false. An epoch must be decimal digits without a sign or a
// leading zero, and fit 64 bits.
func Parse(tok []byte) (Token, bool) {
	if len(tok) < 2 || len(tok) > maxToken || tok[0] != 'O' {
		return Token{}, false
	}
	body := tok[1:]
	if string(body) == "src" {
		return Token{Source: true}, true
	}
	if body[0] != 'e' || len(body) < 2 || body[1] == '0' {
		return Token{}, false
	}
	digits, rest := body[1:], []byte(nil)
	for i, c := range digits {
		if c == 'd' {
			digits, rest = digits[:i], digits[i+1:]
			break
		}
	}
	v, ok := decimal(digits)
	if !ok {
		return Token{}, false
	}
	out := Token{Epoch: v}
	if rest != nil {
		if out.Deadline, ok = hexMs(rest); !ok {
			return Token{}, false
		}
	}
	return out, true
}

// decimal reads 1 to 20 decimal digits that fit 64 bits.
func decimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// hexMs reads a deadline: 1 to 15 lower-case hex digits, no leading zero.
func hexMs(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 || b[0] == '0' {
		return 0, false
	}
	var v int64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// WrongOwner is the reason of the refusal a region sends for a μ-shard it
// does not serve in its view; the reply line is "SERVER_ERROR wrong_owner".
const WrongOwner = "wrong_owner"

// ErrWrongOwner is the Result.Err of a request refused as wrong owner, on
// both sides: the receiver's tier sets it (the proxy spells it), and the
// link client maps the reply back to it.
var ErrWrongOwner = errors.New(WrongOwner)

// IsWrongOwner reports whether the text of a SERVER_ERROR line is the
// wrong-owner refusal (possibly followed by details after a space).
func IsWrongOwner(text []byte) bool {
	n := len(WrongOwner)
	return len(text) >= n && string(text[:n]) == WrongOwner && (len(text) == n || text[n] == ' ')
}
