package protocol

// The lexical rules of memcached's text protocol, reproduced rather than
// improved: a line is split on spaces only (tabs and control characters
// stay inside tokens), a NUL byte ends the line early, at most 23 tokens
// are split and the rest of the line is kept whole, and numbers follow C's
// strtol/strtoul as memcached calls them, including their truncation to 32
// bits.

// maxTokens is memcached's token array size; the last slot is its end
// marker, so a line yields at most maxTokens-1 tokens.
const maxTokens = 24

// tokens is one split line. Offsets index the line given to split.
type tokens struct {
	n     int // tokens found, at most maxTokens-1
	start [maxTokens - 1]int
	end   [maxTokens - 1]int
	// rest is the offset of the unsplit remainder, or -1 when the line
	// was consumed. memcached only keeps a remainder once the token
	// array is full.
	rest int
}

// split tokenizes line the way memcached does.
func (t *tokens) split(line []byte) {
	t.n = 0
	t.rest = -1
	s := 0
	for i := 0; i < len(line); i++ {
		if line[i] != ' ' {
			continue
		}
		if s != i {
			t.start[t.n], t.end[t.n] = s, i
			t.n++
			if t.n == maxTokens-1 {
				if i+1 < len(line) {
					t.rest = i + 1
				}
				return
			}
		}
		s = i + 1
	}
	if s != len(line) {
		t.start[t.n], t.end[t.n] = s, len(line)
		t.n++
	}
}

// ntokens is memcached's count, which includes its end marker.
func (t *tokens) ntokens() int { return t.n + 1 }

func (t *tokens) tok(line []byte, i int) []byte { return line[t.start[i]:t.end[i]] }

func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// cNum parses b as C's strtoull/strtoll do in base 10, where the end of b
// stands for the NUL terminator: optional leading white space, an optional
// sign, at least one digit, then the end or a white-space character
// (memcached ignores whatever follows it). mag is the magnitude;
// overflow reports a magnitude above 2^64-1 (ERANGE).
func cNum(b []byte) (neg bool, mag uint64, overflow, ok bool) {
	i := 0
	for i < len(b) && isCSpace(b[i]) {
		i++
	}
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if mag > (^uint64(0)-d)/10 {
			overflow = true
		}
		mag = mag*10 + d
		digits++
	}
	if digits == 0 {
		return false, 0, false, false
	}
	if i < len(b) && !isCSpace(b[i]) {
		return false, 0, false, false
	}
	return neg, mag, overflow, true
}

// parseUint64 is memcached's safe_strtoull: C strtoull (so "-1" wraps to
// 2^64-1), then a result that is negative as a signed number is refused if
// the token holds a '-' anywhere.
func parseUint64(b []byte) (uint64, bool) {
	neg, mag, overflow, ok := cNum(b)
	if !ok || overflow {
		return 0, false
	}
	v := mag
	if neg {
		v = -mag
	}
	if int64(v) < 0 {
		for _, c := range b {
			if c == '-' {
				return 0, false
			}
		}
	}
	return v, true
}

// parseUint32 is memcached's safe_strtoul into a 32-bit slot: the 64-bit
// unsigned long is truncated.
func parseUint32(b []byte) (uint32, bool) {
	v, ok := parseUint64(b)
	return uint32(v), ok
}

// parseInt32 is memcached's safe_strtol: C strtol into a 64-bit long (out
// of range fails), then stored into an int32, which truncates.
func parseInt32(b []byte) (int32, bool) {
	neg, mag, overflow, ok := cNum(b)
	if !ok || overflow {
		return 0, false
	}
	if neg {
		if mag > 1<<63 {
			return 0, false
		}
		return int32(-int64(mag)), true
	}
	if mag > 1<<63-1 {
		return 0, false
	}
	return int32(int64(mag)), true
}

// b64val maps a base64 character to its value; '=' counts as 0 and every
// other byte is invalid (0x80) and skipped, as memcached's decoder does.
var b64val = func() (t [256]byte) {
	for i := range t {
		t[i] = 0x80
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = byte(i)
	}
	t['='] = 0
	return t
}()

// decodeBase64 decodes src into dst (len(dst) >= len(src)*3/4) with
// memcached's lenient rules: bytes outside the alphabet are skipped, the
// remaining count must be a non-zero multiple of four, decoding stops after
// the first quartet holding '=', whose padding count (1 or 2) trims the
// output; any other padding fails. It returns the decoded length, 0 on
// failure (a successful decode is never empty).
func decodeBase64(dst, src []byte) int {
	count := 0
	for _, c := range src {
		if b64val[c] != 0x80 {
			count++
		}
	}
	if count == 0 || count%4 != 0 {
		return 0
	}
	var block [4]byte
	n, q, pad := 0, 0, 0
	for _, c := range src {
		v := b64val[c]
		if v == 0x80 {
			continue
		}
		if c == '=' {
			pad++
		}
		block[q] = v
		q++
		if q < 4 {
			continue
		}
		dst[n] = block[0]<<2 | block[1]>>4
		dst[n+1] = block[1]<<4 | block[2]>>2
		dst[n+2] = block[2]<<6 | block[3]
		n += 3
		q = 0
		if pad == 0 {
			continue
		}
		switch pad {
		case 1:
			n--
		case 2:
			n -= 2
		default:
			return 0
		}
		break
	}
	return n
}

// hasPrefix is bytes.HasPrefix for a string prefix without conversion.
func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}

// eq compares a token with a keyword without allocating.
func eq(b []byte, s string) bool { return string(b) == s }
