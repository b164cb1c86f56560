package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// A reply stream is a sequence of units: one line, and for VALUE and VA
// lines the data block that follows it. Reading by units, never by searching
// for text, keeps values that happen to contain "MN\r\n" or "END\r\n" from
// ending a reply early.
type unit struct {
	raw  []byte // the line with its terminator, then the data block if any
	line []byte // the line without its terminator
}

// nextUnit parses one complete unit at the start of b. ok is false when b
// holds only part of one.
func nextUnit(b []byte) (u unit, ok bool) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return unit{}, false
	}
	line := bytes.TrimSuffix(b[:nl], []byte("\r"))
	end := nl + 1
	if n, has := dataLen(line); has {
		end += n + 2
		if end > len(b) {
			return unit{}, false
		}
	}
	return unit{raw: b[:end], line: line}, true
}

// dataLen reports the length of the data block announced by a reply line.
func dataLen(line []byte) (int, bool) {
	f := strings.Split(string(line), " ")
	var field string
	switch {
	case f[0] == "VALUE" && (len(f) == 4 || len(f) == 5):
		field = f[3]
	case f[0] == "VA" && len(f) >= 2:
		field = f[1]
	default:
		return 0, false
	}
	n, err := strconv.Atoi(field)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// splitUnits cuts b into complete units; rest is a trailing partial unit.
func splitUnits(b []byte) (units []unit, rest []byte) {
	for len(b) > 0 {
		u, ok := nextUnit(b)
		if !ok {
			break
		}
		units = append(units, u)
		b = b[len(u.raw):]
	}
	return units, b
}

// errNoSentinel says the reply did not end where the harness expected.
var errNoSentinel = errors.New("reply did not reach its sentinel")

// readReply reads until it has seen wantMN "MN" lines and the last complete
// unit is one of them. It returns everything read, sentinel included.
func readReply(c net.Conn, wantMN int, deadline time.Time) ([]byte, error) {
	_ = c.SetReadDeadline(deadline)
	var (
		buf    []byte
		parsed int // bytes of buf already split into units
		seen   int
		chunk  = make([]byte, 64<<10)
	)
	for {
		n, err := c.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for {
			u, ok := nextUnit(buf[parsed:])
			if !ok {
				break
			}
			parsed += len(u.raw)
			if string(u.line) == "MN" {
				seen++
			}
		}
		if seen >= wantMN && parsed == len(buf) {
			return buf, nil
		}
		if err != nil {
			return buf, fmt.Errorf("%w: saw %d of %d MN, then %v", errNoSentinel, seen, wantMN, err)
		}
	}
}

// readToClose reads until the peer closes the connection or the deadline
// passes. closed is false when the deadline passed with the connection open.
func readToClose(c net.Conn, deadline time.Time) (buf []byte, closed bool) {
	_ = c.SetReadDeadline(deadline)
	chunk := make([]byte, 64<<10)
	for {
		n, err := c.Read(chunk)
		buf = append(buf, chunk[:n]...)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return buf, false
		}
		// io.EOF is an orderly close; a reset (the server closed with our
		// bytes still unread) is a close too.
		return buf, true
	}
}

// normalized is a reply with what may legitimately differ taken out.
type normalized struct {
	text   []byte  // the reply with CAS, version and clock values masked
	clocks []int64 // the masked t and l values, in order
	cas    []uint64
}

// clockSlack is how far two servers' t and l values may be apart. memcached
// advances its clock once a second and derives absolute expiry times from a
// start time rounded to the second, so two correct servers can be up to two
// seconds apart.
const clockSlack = 2

// normalize masks non-zero CAS uniques (fifth field of VALUE, c flag of meta
// replies), the text after VERSION, and the t and l meta values. Data blocks
// are left untouched. A trailing partial unit is kept verbatim.
func normalize(reply []byte) normalized {
	var n normalized
	units, rest := splitUnits(reply)
	for _, u := range units {
		body := u.raw[len(u.line):]
		n.text = append(n.text, n.maskLine(string(u.line))...)
		n.text = append(n.text, body...)
	}
	n.text = append(n.text, rest...)
	return n
}

var metaCodes = map[string]bool{"HD": true, "VA": true, "EN": true, "NS": true, "EX": true, "NF": true, "MN": true}

func (n *normalized) maskLine(line string) string {
	f := strings.Split(line, " ")
	switch {
	case f[0] == "VALUE" && len(f) == 5:
		f[4] = n.maskCAS(f[4])
	case f[0] == "VERSION" && len(f) >= 2:
		return "VERSION <version>"
	case metaCodes[f[0]]:
		first := 1
		if f[0] == "VA" {
			first = 2 // f[1] is the data length
		}
		for i := first; i < len(f); i++ {
			tok := f[i]
			if len(tok) < 2 {
				continue
			}
			switch tok[0] {
			case 'c':
				if isDigits(tok[1:]) {
					f[i] = "c" + n.maskCAS(tok[1:])
				}
			case 't', 'l':
				if v, err := strconv.ParseInt(tok[1:], 10, 64); err == nil {
					n.clocks = append(n.clocks, v)
					f[i] = tok[:1] + "<secs>"
				}
			}
		}
	default:
		return line
	}
	return strings.Join(f, " ")
}

func (n *normalized) maskCAS(tok string) string {
	v, err := strconv.ParseUint(tok, 10, 64)
	if err != nil || v == 0 {
		return tok // zero means "no CAS" and must match exactly
	}
	n.cas = append(n.cas, v)
	return "<cas>"
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// sameReply reports whether two replies agree once normalized.
func sameReply(a, b []byte) bool {
	na, nb := normalize(a), normalize(b)
	if !bytes.Equal(na.text, nb.text) || len(na.clocks) != len(nb.clocks) {
		return false
	}
	for i := range na.clocks {
		x, y := na.clocks[i], nb.clocks[i]
		if (x < 0 || y < 0) && x != y {
			return false // -1 (never expires) is not a number of seconds
		}
		if x-y > clockSlack || y-x > clockSlack {
			return false
		}
	}
	return true
}

// show renders a reply for a failure message: one unit per line, quoted so
// that \r, \n and binary bytes are visible.
func show(reply []byte) string {
	if len(reply) == 0 {
		return "    (nothing)\n"
	}
	var sb strings.Builder
	units, rest := splitUnits(reply)
	for _, u := range units {
		fmt.Fprintf(&sb, "    %s\n", quoteCapped(u.raw))
	}
	if len(rest) > 0 {
		fmt.Fprintf(&sb, "    %s   (partial)\n", quoteCapped(rest))
	}
	return sb.String()
}

// quoteCapped quotes b, eliding the middle of very long values.
func quoteCapped(b []byte) string {
	const max = 200
	if len(b) <= max {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%s ...(%d bytes)... %s", strconv.Quote(string(b[:max/2])), len(b)-max, strconv.Quote(string(b[len(b)-max/2:])))
}
