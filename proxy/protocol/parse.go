package protocol

import "bytes"

// Parser turns one client connection's byte stream into Commands. It holds
// the state memcached keeps per connection between requests: whether the
// first byte has been seen, and how many bytes of a refused value are still
// to be swallowed. A Parser belongs to one connection and one goroutine.
type Parser struct {
	lim     Limits
	started bool
	// binary: the first byte was the binary request magic, and the
	// connection speaks memcached's binary protocol for good (binary.go).
	binary bool
	// authed: the connection authenticated (only asked with Limits.Auth).
	authed bool
	// swallow counts bytes of a refused data block still to discard.
	swallow int64
	// ws is what one Parse call needs and no later call reads; parsers that
	// run on one goroutine may share it (NewParserShared).
	ws *Scratch
	// gl is the get-family line being handed out in pieces, reply the
	// fate of its pieces that their replies share (parse_get.go).
	gl    getLine
	reply lineReply
	// clean counts bytes at the start of the unread input already found
	// free of newlines, so a long line is not searched again on every read.
	clean int
}

// Scratch is a Parser's working memory within one Parse call: the split
// line and a decoded meta key, about 650 bytes. Nothing in it outlives the
// call, so one Scratch serves every parser that runs on one goroutine, and
// ten thousand idle connections do not each carry their own.
type Scratch struct {
	tok tokens
	// scratch holds a base64-decoded meta key before it is owned.
	scratch [KeyMaxLen]byte
}

// NewParser returns a Parser for a new connection with a Scratch of its
// own. Zero fields of l take their defaults; values Validate would refuse
// are raised to the minimum.
func NewParser(l Limits) *Parser {
	return NewParserShared(l, new(Scratch))
}

// NewParserShared is NewParser with working memory ws, which the caller
// may share among parsers that never run at the same time (those of one
// event loop). ws must not be nil.
func NewParserShared(l Limits, ws *Scratch) *Parser {
	p := &Parser{ws: ws}
	p.Reset(l)
	return p
}

// Reset readies p for a new connection with limits l.
func (p *Parser) Reset(l Limits) {
	*p = Parser{lim: l.raised(), ws: p.ws}
}

// raised is l with defaults filled in and values Validate would refuse
// raised to the minimum.
func (l Limits) raised() Limits {
	l = l.filled()
	l.MaxItemSize = max(l.MaxItemSize, minItemSize)
	l.MaxLineLen = max(l.MaxLineLen, lineNoNewlineMax)
	return l
}

// Mode is what a Parser carries from one request of its connection to the
// next: whether the first byte chose the protocol, which one, and whether
// the connection authenticated. A Parser between requests holds nothing
// else, so a connection that goes quiet can keep its Mode (a byte) and
// give the Parser back (Park), and take any Parser when bytes come again
// (Resume).
type Mode uint8

const (
	modeStarted Mode = 1 << iota
	modeBinary
	modeAuthed
)

// Park reports p's Mode and whether p is between requests: no request
// begun, no refused data block being swallowed, no get line being served
// in pieces, no unread bytes searched. Only then may p serve another
// connection. Commands p filled refer to p until they are answered, so a
// caller parks a Parser only once every one of them has been.
func (p *Parser) Park() (Mode, bool) {
	if p.swallow != 0 || p.gl.op != OpNone || p.clean != 0 {
		return 0, false
	}
	var m Mode
	if p.started {
		m |= modeStarted
	}
	if p.binary {
		m |= modeBinary
	}
	if p.authed {
		m |= modeAuthed
	}
	return m, true
}

// Resume readies p to go on with a connection that was parked in mode m,
// under limits l: p continues where the connection's last Parser stopped.
func (p *Parser) Resume(l Limits, m Mode) {
	if _, rest := p.Park(); rest {
		p.lim = l.raised() // nothing else to clear: the usual case, kept cheap
	} else {
		p.Reset(l)
	}
	p.started = m&modeStarted != 0
	p.binary = m&modeBinary != 0
	p.authed = m&modeAuthed != 0
}

// Limits returns the limits in force, defaults filled in.
func (p *Parser) Limits() Limits { return p.lim }

// Swallowing reports how many bytes of a refused data block the parser
// will still discard before the next request.
func (p *Parser) Swallowing() int64 { return p.swallow }

// Parse examines buf, all unread bytes of the connection, and fills cmd
// from the first complete request in it. buf is borrowed for the call
// only; cmd gets copies of everything it keeps.
//
//   - n == 0, err == nil: the request is incomplete; call again with more
//     bytes. No part of a request is ever consumed.
//   - n > 0, err == nil: n bytes were consumed. cmd.Op == OpNone means
//     there is nothing to answer (swallowed data, a suppressed error).
//   - errors.Is(err, ErrClose): memcached would close the connection here
//     (see the package documentation for which pending replies it still
//     writes). cmd.Reply, if set, is the last thing to send; n counts what
//     was consumed.
//
// A get-family line comes out in pieces of at most PieceKeys keys, one
// Command per call (see parse_get.go); a Command whose More reports true
// answers without END, which a later piece of the line writes.
//
// Invariant: n <= len(buf), and for any prefix buf[:k] that yields n' > 0,
// n' equals the n of the full buf.
//
// After n == 0, the next call must pass the same unread bytes, extended:
// the parser remembers how far it searched them.
func (p *Parser) Parse(buf []byte, cmd *Command) (n int, err error) {
	n, err = p.parse(buf, cmd)
	if n > 0 {
		p.clean = max(0, p.clean-n)
	}
	return n, err
}

func (p *Parser) parse(buf []byte, cmd *Command) (n int, err error) {
	cmd.Reset()
	if p.swallow > 0 {
		k := int64(len(buf))
		if k > p.swallow {
			k = p.swallow
		}
		p.swallow -= k
		return int(k), nil
	}
	if len(buf) == 0 {
		return 0, nil
	}
	if p.gl.op != OpNone {
		return p.piece(buf, cmd), nil
	}
	if !p.started {
		p.started = true
		// memcached picks its binary protocol when a connection's first
		// byte is the binary request magic, for the connection's life.
		p.binary = buf[0] == binReqMagic
	}
	if p.binary {
		return p.parseBinary(buf, cmd)
	}
	if p.lim.Auth != nil && !p.authed {
		return p.textAuth(buf, cmd)
	}

	limit := min(len(buf), max(p.lim.MaxLineLen, lineMax))
	nl := p.indexNewline(buf[:limit])
	if nl > lineNoNewlineMax {
		if isLongGet(buf) {
			if nl >= p.lim.MaxLineLen {
				nl = -1 // too far to take the line whole: it streams
			}
		} else if nl >= lineMax {
			cmd.Close = true
			return 0, errLineTooLong
		}
	}
	if nl < 0 {
		return p.noNewline(buf, cmd)
	}
	consumed := nl + 1
	line := buf[:nl]
	// memcached strips one \r before the \n, but not from a line that is
	// only "\r".
	if nl > 1 && line[nl-1] == '\r' {
		line = line[:nl-1]
	}
	// memcached's tokenizer measures the line with strlen.
	if z := bytes.IndexByte(line, 0); z >= 0 {
		line = line[:z]
	}
	return p.command(buf, consumed, line, cmd)
}

// noNewline decides about a line whose newline has not arrived (or lies
// beyond MaxLineLen): wait, stream a long get, or close as memcached does
// once the line is too long to be a request.
func (p *Parser) noNewline(buf []byte, cmd *Command) (int, error) {
	if len(buf) <= lineNoNewlineMax {
		return 0, nil
	}
	if !isLongGet(buf) {
		cmd.Close = true
		if leadingSpaces(buf) > getLeadingSpaceMax {
			return 0, errLeadSpace
		}
		return 0, errLongLine
	}
	if len(buf) >= p.lim.MaxLineLen {
		return p.startStream(buf), nil
	}
	return 0, nil
}

// leadingSpaces counts leading spaces, stopping past the most memcached
// tolerates.
func leadingSpaces(b []byte) int {
	i := 0
	for i < len(b) && i <= getLeadingSpaceMax && b[i] == ' ' {
		i++
	}
	return i
}

// isLongGet reports whether memcached lets this line grow past its read
// buffer: "get " or "gets " after at most 100 leading spaces.
func isLongGet(buf []byte) bool {
	sp := leadingSpaces(buf)
	if sp > getLeadingSpaceMax {
		return false
	}
	rest := buf[sp:]
	return hasPrefix(rest, "get ") || hasPrefix(rest, "gets ")
}

// command dispatches a complete line the way memcached's command table
// does: by first letter, then by exact name, with its token-count checks.
// buf is the whole buffer (a storage command's data follows the line),
// consumed the length of the line with its newline.
func (p *Parser) command(buf []byte, consumed int, line []byte, cmd *Command) (int, error) {
	t := &p.ws.tok
	t.split(line)
	nt := t.ntokens()
	if t.n == 0 || t.end[0]-t.start[0] < 2 {
		cmd.fail(rError, false)
		return consumed, nil
	}
	name := t.tok(line, 0)
	switch {
	case name[0] == 'm' && len(name) == 2:
		return p.meta(buf, consumed, line, cmd)
	case name[0] == 'g':
		if nt < 3 {
			break
		}
		switch {
		case eq(name, "get"):
			return p.startGet(buf, consumed, line, cmd, OpGet)
		case eq(name, "gets"):
			return p.startGet(buf, consumed, line, cmd, OpGets)
		case eq(name, "gat"):
			return p.startGet(buf, consumed, line, cmd, OpGat)
		case eq(name, "gats"):
			return p.startGet(buf, consumed, line, cmd, OpGats)
		default:
			cmd.fail(rError, false)
		}
		return consumed, nil
	case name[0] == 's':
		switch {
		case eq(name, "set"):
			if nt == 6 || nt == 7 {
				return p.update(buf, consumed, line, cmd, OpSet)
			}
		case eq(name, "stats"):
			p.args(line, cmd, OpStats)
			return consumed, nil
		case eq(name, "shutdown"):
			cmd.fail(rShutdown, false)
			return consumed, nil
		case eq(name, "slabs"):
			p.admin(line, cmd, name)
			return consumed, nil
		}
	case name[0] == 'a':
		if (eq(name, "add") || eq(name, "append")) && (nt == 6 || nt == 7) {
			op := OpAdd
			if eq(name, "append") {
				op = OpAppend
			}
			return p.update(buf, consumed, line, cmd, op)
		}
	case name[0] == 'c':
		if eq(name, "cas") && (nt == 7 || nt == 8) {
			return p.update(buf, consumed, line, cmd, OpCas)
		}
		if eq(name, "cache_memlimit") {
			p.admin(line, cmd, name)
			return consumed, nil
		}
	case name[0] == 'i':
		if eq(name, "incr") && (nt == 4 || nt == 5) {
			p.arith(line, cmd, OpIncr)
			return consumed, nil
		}
	case name[0] == 'd':
		if eq(name, "delete") && nt >= 3 && nt <= 5 {
			p.delete(line, cmd)
			return consumed, nil
		}
		if eq(name, "decr") && (nt == 4 || nt == 5) {
			p.arith(line, cmd, OpDecr)
			return consumed, nil
		}
	case name[0] == 't':
		if eq(name, "touch") && (nt == 4 || nt == 5) {
			p.touch(line, cmd)
			return consumed, nil
		}
	case eq(name, "replace") || eq(name, "prepend"):
		if nt == 6 || nt == 7 {
			op := OpReplace
			if eq(name, "prepend") {
				op = OpPrepend
			}
			return p.update(buf, consumed, line, cmd, op)
		}
	case eq(name, "bget"):
		if nt >= 3 {
			return p.startGet(buf, consumed, line, cmd, OpGet)
		}
	case eq(name, "flush_all"):
		if nt >= 2 && nt <= 4 {
			p.flushAll(line, cmd)
			return consumed, nil
		}
	case eq(name, "version"):
		cmd.Op = OpVersion
		return consumed, nil
	case eq(name, "quit"):
		cmd.Op = OpQuit
		cmd.Close = true
		return consumed, errQuit
	case eq(name, "verbosity"):
		if nt == 3 || nt == 4 {
			p.verbosity(line, cmd)
			return consumed, nil
		}
	case eq(name, "lru_crawler"):
		p.admin(line, cmd, name)
		return consumed, nil
	case eq(name, "refresh_certs"):
		// memcached takes any arguments and honours a last noreply, for
		// the OK only: its errors are sent regardless (the proxy's
		// inspect.go answers).
		p.adminArgs(line, cmd, 1)
		cmd.NoReply = p.noreply(line)
		return consumed, nil
	default:
		// Only a name memcached does not know gets the HTTP test; its
		// administration commands that a proxy does not serve answer
		// ERROR.
		if !isAdmin(name) && hasPrefix(t.tok(line, t.n-1), "HTTP/") {
			cmd.Close = true
			return consumed, errHTTP
		}
	}
	cmd.fail(rError, false)
	return consumed, nil
}

// isAdmin reports the memcached administration commands that would
// otherwise reach the HTTP test: memcached knows them, so they never close
// the connection.
func isAdmin(name []byte) bool {
	switch string(name) {
	case "lru_crawler", "watch", "lru", "extstore":
		return true
	}
	return false
}
