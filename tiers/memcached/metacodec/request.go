package metacodec

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"

	"github.com/strata-cache/strata/tiers"
)

// KeyMaxLen is memcached's longest key token, checked before decoding a
// base64 key, so a binary key (padded base64, as memcached requires) may have at
// most 186 bytes.
const KeyMaxLen = 250

// Encoding errors: the request cannot be spelt so that memcached takes it.
// They are the caller's fault, not the backend's.
var (
	ErrEmptyKey    = errors.New("metacodec: empty key")
	ErrKeyTooLong  = errors.New("metacodec: key longer than memcached accepts")
	ErrTimeRange   = errors.New("metacodec: expiry time outside memcached's 32-bit range")
	ErrUnknownKind = errors.New("metacodec: request kind or mode has no meta spelling")
)

// AppendRequest appends the meta command that performs r. On error dst is
// returned unchanged.
//
//	get    mg <key> [b] [N<ttl>] [T<ttl>] [R<ttl>] [v] [f] [t] [c] [s] [h] [l] [u]
//	set    ms <key> <len> [b] [F<flags>] [T<ttl>] [C<cas>] [I] [M<mode>] [N<ttl>] [c]
//	delete md <key> [b] [C<cas>] [I] [T<ttl>]
//	arith  ma <key> [b] [MD] D<delta> [N<ttl> J<initial>] [T<ttl>] [C<cas>] v [t] [c]
//	flush  flush_all [<delay>]
//
// The flags that change the item (N, T, R) come before the flags that
// report on it, because memcached applies and reports them in the order
// written: mg's t then gives the TTL after a touch, as Result.TTL promises.
func AppendRequest(dst []byte, r *tiers.Request) ([]byte, error) {
	return AppendRequestOpaque(dst, r, nil)
}

// AppendRequestOpaque is AppendRequest with extra flags at the end of the
// command line: opaque is appended verbatim before the line's \r\n, so it
// must be empty or start with a space and hold only flag tokens (a region
// link's " Oe17"). A flush ignores it. memcached echoes an O token in the
// reply, which ParseReply skips, so replies still pair first in, first out.
func AppendRequestOpaque(dst []byte, r *tiers.Request, opaque []byte) ([]byte, error) {
	start := len(dst)
	var err error
	switch r.Kind {
	case tiers.KindGet:
		dst, err = appendGet(dst, r, opaque)
	case tiers.KindSet:
		dst, err = appendSet(dst, r, opaque)
	case tiers.KindDelete:
		dst, err = appendDelete(dst, r, opaque)
	case tiers.KindArith:
		dst, err = appendArith(dst, r, opaque)
	case tiers.KindFlush:
		dst = AppendFlush(dst, r.TTL)
	default:
		err = ErrUnknownKind
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// AppendFlush appends flush_all with a delay in seconds (relative, or an
// absolute Unix time past 30 days); zero or negative flushes now.
func AppendFlush(dst []byte, delay int64) []byte {
	dst = append(dst, "flush_all"...)
	if delay > 0 {
		if delay > math.MaxInt32 {
			delay = math.MaxInt32
		}
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, delay, 10)
	}
	return append(dst, "\r\n"...)
}

// AppendNoop appends the meta no-op, answered "MN".
func AppendNoop(dst []byte) []byte { return append(dst, "mn\r\n"...) }

// AppendVersion appends the version command (health probes use it).
func AppendVersion(dst []byte) []byte { return append(dst, "version\r\n"...) }

func appendGet(dst []byte, r *tiers.Request, opaque []byte) ([]byte, error) {
	dst = append(dst, "mg "...)
	dst, b64, err := appendKey(dst, r.Key, r.KeyBinary)
	if err != nil {
		return dst, err
	}
	dst = appendIf(dst, b64, " b")
	// With a binary key, ask for the key back: the reply's b flag says
	// whether the item itself is binary-keyed, which mg k must echo.
	dst = appendIf(dst, r.KeyBinary, " k")
	if r.Vivify {
		if dst, err = appendTime(dst, 'N', r.VivifyTTL); err != nil {
			return dst, err
		}
	}
	if r.HasTTL {
		if dst, err = appendTime(dst, 'T', r.TTL); err != nil {
			return dst, err
		}
	}
	if r.Recache {
		if dst, err = appendTime(dst, 'R', r.RecacheTTL); err != nil {
			return dst, err
		}
	}
	dst = appendIf(dst, r.WantValue, " v")
	dst = appendIf(dst, r.WantFlags, " f")
	dst = appendIf(dst, r.WantTTL, " t")
	dst = appendIf(dst, r.WantCAS, " c")
	dst = appendIf(dst, r.WantSize, " s")
	dst = appendIf(dst, r.WantHit, " h")
	dst = appendIf(dst, r.WantLastAccess, " l")
	dst = appendIf(dst, r.NoBump, " u")
	return append(append(dst, opaque...), "\r\n"...), nil
}

var setModes = [...]string{
	tiers.ModeSet:     "",
	tiers.ModeAdd:     " ME",
	tiers.ModeReplace: " MR",
	tiers.ModeAppend:  " MA",
	tiers.ModePrepend: " MP",
}

func appendSet(dst []byte, r *tiers.Request, opaque []byte) ([]byte, error) {
	if int(r.Mode) >= len(setModes) {
		return dst, ErrUnknownKind
	}
	dst = append(dst, "ms "...)
	dst, b64, err := appendKey(dst, r.Key, r.KeyBinary)
	if err != nil {
		return dst, err
	}
	// The length is positional: it comes before every flag, b included.
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(r.Value)), 10)
	dst = appendIf(dst, b64, " b")
	if r.ClientFlags != 0 {
		dst = append(dst, " F"...)
		dst = strconv.AppendUint(dst, uint64(r.ClientFlags), 10)
	}
	if r.TTL != 0 {
		if dst, err = appendTime(dst, 'T', r.TTL); err != nil {
			return dst, err
		}
	}
	if r.HasCompareCAS {
		dst = append(dst, " C"...)
		dst = strconv.AppendUint(dst, r.CompareCAS, 10)
	}
	dst = appendIf(dst, r.Invalidate, " I")
	dst = append(dst, setModes[r.Mode]...)
	if r.Vivify {
		if dst, err = appendTime(dst, 'N', r.VivifyTTL); err != nil {
			return dst, err
		}
	}
	dst = appendIf(dst, r.WantCAS, " c")
	dst = append(append(dst, opaque...), "\r\n"...)
	dst = append(dst, r.Value...)
	return append(dst, "\r\n"...), nil
}

func appendDelete(dst []byte, r *tiers.Request, opaque []byte) ([]byte, error) {
	dst = append(dst, "md "...)
	dst, b64, err := appendKey(dst, r.Key, r.KeyBinary)
	if err != nil {
		return dst, err
	}
	dst = appendIf(dst, b64, " b")
	if r.HasCompareCAS {
		dst = append(dst, " C"...)
		dst = strconv.AppendUint(dst, r.CompareCAS, 10)
	}
	dst = appendIf(dst, r.Invalidate, " I")
	if r.HasTTL {
		if dst, err = appendTime(dst, 'T', r.TTL); err != nil {
			return dst, err
		}
	}
	return append(append(dst, opaque...), "\r\n"...), nil
}

func appendArith(dst []byte, r *tiers.Request, opaque []byte) ([]byte, error) {
	var decr bool
	switch r.Mode {
	case tiers.ModeIncr:
	case tiers.ModeDecr:
		decr = true
	default:
		return dst, ErrUnknownKind
	}
	dst = append(dst, "ma "...)
	dst, b64, err := appendKey(dst, r.Key, r.KeyBinary)
	if err != nil {
		return dst, err
	}
	dst = appendIf(dst, b64, " b")
	dst = appendIf(dst, decr, " MD")
	dst = append(dst, " D"...)
	dst = strconv.AppendUint(dst, r.Delta, 10)
	if r.Vivify {
		if dst, err = appendTime(dst, 'N', r.VivifyTTL); err != nil {
			return dst, err
		}
		dst = append(dst, " J"...)
		dst = strconv.AppendUint(dst, r.Initial, 10)
	}
	if r.HasTTL {
		if dst, err = appendTime(dst, 'T', r.TTL); err != nil {
			return dst, err
		}
	}
	if r.HasCompareCAS {
		dst = append(dst, " C"...)
		dst = strconv.AppendUint(dst, r.CompareCAS, 10)
	}
	// The new number is always asked for: Result.Value carries it for the
	// text incr/decr reply whether or not the request said so.
	dst = append(dst, " v"...)
	dst = appendIf(dst, r.WantTTL, " t")
	dst = appendIf(dst, r.WantCAS, " c")
	return append(append(dst, opaque...), "\r\n"...), nil
}

// plainKey reports whether memcached's tokenizer takes key as it is: no
// byte that splits or ends a line or that a log would garble.
func plainKey(key []byte) bool {
	for _, c := range key {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// appendKey appends the key token. It reports whether the token is base64,
// in which case the command must carry the b flag. A key the client sent
// base64-encoded (binary) stays encoded even when it would do as text, so
// the backend marks the items it creates as binary-keyed, as memcached
// would have.
func appendKey(dst []byte, key []byte, binary bool) ([]byte, bool, error) {
	if len(key) == 0 {
		return dst, false, ErrEmptyKey
	}
	if !binary && plainKey(key) {
		if len(key) > KeyMaxLen {
			return dst, false, ErrKeyTooLong
		}
		return append(dst, key...), false, nil
	}
	if base64.StdEncoding.EncodedLen(len(key)) > KeyMaxLen {
		return dst, false, ErrKeyTooLong
	}
	return base64.StdEncoding.AppendEncode(dst, key), true, nil
}

// appendTime appends a flag with an expiry argument. memcached reads these
// into a 32-bit int and refuses the command otherwise.
func appendTime(dst []byte, flag byte, v int64) ([]byte, error) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return dst, ErrTimeRange
	}
	dst = append(dst, ' ', flag)
	return strconv.AppendInt(dst, v, 10), nil
}

func appendIf(dst []byte, cond bool, s string) []byte {
	if cond {
		return append(dst, s...)
	}
	return dst
}
