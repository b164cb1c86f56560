package protocol

import (
	"bytes"

	"github.com/strata-cache/strata/tiers"
)

// Get-family lines in pieces.
//
// memcached serves a get or gets line of any length: it grows its read
// buffer until the newline comes (gat, gats and bget lines cannot grow past
// its 16 KiB buffer). The parser hands every get-family line out in pieces
// of at most PieceKeys keys, each a Command of its own that answers its
// VALUE lines, and the last one END. So the requests of a long line enter
// the proxy's per-connection bounds like those of pipelined commands, and a
// line need never be buffered whole. There are two ways in:
//
//   - Whole: the newline lies within Limits.MaxLineLen bytes of the start
//     of the line. The line is checked whole before its first piece, since
//     memcached answers a line holding an over-long key anywhere with
//     "CLIENT_ERROR bad command line format" alone.
//   - Streamed: a get or gets line without a newline in its first
//     MaxLineLen bytes. The command name is consumed at once; then each
//     window of MaxLineLen unread bytes is checked, and the complete keys
//     in it (those a space follows) are handed out in pieces, until a
//     window holds the newline. The parser never holds more than one
//     window of the line. An over-long key in a later window can no longer
//     take back the pieces already answered: the line then ends with the
//     error after them (a deviation listed in doc.go).
//
// Invariant, between calls: when gl.op != OpNone, the unread input starts
// inside the line at a key boundary, and its first gl.ready bytes hold only
// checked keys and spaces.

// PieceKeys is the most keys one Command of a get-family line carries.
const PieceKeys = 64

// getLine is the part of a get-family line not yet handed out.
type getLine struct {
	op     Opcode // OpNone: no line in progress
	ttl    int32  // gat/gats exptime
	keys   int    // keys handed out for the line so far
	pieces int    // Commands handed out for the line so far
	ready  int    // bytes at the start of the unread input holding only checked keys and spaces
	final  bool   // the line's keys end where ready ends
	tail   int    // with final: bytes after ready up to and including the newline; -1 while unseen
	bad    bool   // an over-long key: the line answers CLIENT_ERROR once its newline is consumed
}

// lineReply carries the fate of a line's earlier pieces to the replies of
// its later ones; the Parser owns one and lends it to its Commands.
type lineReply struct {
	// failed: a piece answered SERVER_ERROR, which ends the reply for the
	// client; the line's later pieces write nothing.
	failed bool
}

// overlong reports whether b, split on spaces, holds a token longer than a
// key may be.
func overlong(b []byte) bool {
	for len(b) > 0 {
		i := bytes.IndexByte(b, ' ')
		if i < 0 {
			return len(b) > KeyMaxLen
		}
		if i > KeyMaxLen {
			return true
		}
		b = b[i+1:]
	}
	return false
}

// indexNewline is bytes.IndexByte(b, '\n') that skips the bytes an earlier
// call already found free of newlines (p.clean), so a line that arrives in
// small reads is scanned once, not once per read.
func (p *Parser) indexNewline(b []byte) int {
	from := min(p.clean, len(b))
	if i := bytes.IndexByte(b[from:], '\n'); i >= 0 {
		return from + i
	}
	p.clean = max(p.clean, len(b))
	return -1
}

// startGet takes a get-family line that is whole in buf: line is its text
// (newline stripped, cut at a NUL), consumed its length with the newline,
// and p.ws.tok its tokens. It answers the line's errors, or its first piece.
func (p *Parser) startGet(buf []byte, consumed int, line []byte, cmd *Command, op Opcode) (int, error) {
	t := &p.ws.tok
	first := 1
	var ttl int32
	if op == OpGat || op == OpGats {
		v, ok := parseInt32(t.tok(line, 1))
		if !ok {
			cmd.fail(rBadExptime, false)
			return consumed, nil
		}
		ttl, first = v, 2
	}
	if t.rest < 0 && t.n-first <= PieceKeys {
		return p.shortGet(line, consumed, cmd, op, ttl, first)
	}
	start := len(line)
	if first < t.n {
		start = t.start[first]
	}
	if overlong(line[start:]) {
		// memcached drops the values it gathered for the line.
		cmd.fail(rBadFormat, false)
		return consumed, nil
	}
	p.gl = getLine{op: op, ttl: ttl, ready: len(line) - start, final: true, tail: consumed - len(line)}
	return start + p.piece(buf[start:], cmd), nil
}

// shortGet is startGet for the common line, one piece whose keys the
// tokenizer already split: it answers from the tokens, without scanning
// the line again.
func (p *Parser) shortGet(line []byte, consumed int, cmd *Command, op Opcode, ttl int32, first int) (int, error) {
	t := &p.ws.tok
	for i := first; i < t.n; i++ {
		if t.end[i]-t.start[i] > KeyMaxLen {
			cmd.fail(rBadFormat, false)
			return consumed, nil
		}
	}
	cmd.Op = op
	cmd.line = &p.reply
	cmd.first = true
	if first < t.n {
		cmd.reserve(t.end[t.n-1] - t.start[first])
	}
	for i := first; i < t.n; i++ {
		addGetKey(cmd, t.tok(line, i), op, ttl)
	}
	return consumed, nil
}

// startStream takes a get/gets line with no newline in its first
// MaxLineLen bytes: it consumes the command name and leaves the keys to
// piece. Nothing is answered yet.
func (p *Parser) startStream(buf []byte) int {
	sp := leadingSpaces(buf)
	op, n := OpGet, sp+len("get")
	if hasPrefix(buf[sp:], "gets ") {
		op, n = OpGets, sp+len("gets")
	}
	p.gl = getLine{op: op}
	return n
}

// piece hands out the next piece of the line in progress: up to PieceKeys
// keys from the checked bytes, with END (or the line's error) when they
// are the last. It returns the bytes consumed; 0 means wait for more.
func (p *Parser) piece(buf []byte, cmd *Command) int {
	g := &p.gl
	if g.ready == 0 && !g.final && !p.examine(buf) {
		return 0
	}
	if g.ready == 0 && g.tail < 0 {
		// The keys are over but the line is not: discard up to its
		// newline, one window at a time.
		win := p.lim.MaxLineLen
		nl := p.indexNewline(buf[:min(len(buf), win)])
		if nl < 0 {
			if len(buf) < win {
				return 0
			}
			return win
		}
		g.tail = nl + 1
	}
	if g.final && g.tail >= 0 && len(buf) < g.ready+g.tail {
		return 0 // not the bytes Parse saw before: wait until they are back
	}

	region := buf[:g.ready]
	end, i, k := 0, 0, 0
	for k < PieceKeys {
		for i < len(region) && region[i] == ' ' {
			i++
		}
		if i == len(region) {
			break
		}
		j := bytes.IndexByte(region[i:], ' ')
		if j < 0 {
			j = len(region)
		} else {
			j += i
		}
		k++
		end, i = j, j
	}
	for i < len(region) && region[i] == ' ' {
		i++
	}
	n, last := end, false
	if i == len(region) {
		// Nothing but spaces is left of the checked bytes.
		n = len(region)
		g.ready = 0
		if g.final && g.tail >= 0 {
			n += g.tail
			last = true
		}
	} else {
		g.ready -= end
	}
	if k == 0 && !last {
		return n // only spaces: nothing to answer
	}

	cmd.Op = g.op
	cmd.line = &p.reply
	cmd.first = g.pieces == 0
	cmd.more = !last
	g.pieces++
	g.keys += k
	cmd.reserve(end)
	for rest := region[:end]; len(rest) > 0; {
		j := bytes.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		if j > 0 {
			addGetKey(cmd, rest[:j], g.op, g.ttl)
		}
		rest = rest[min(j+1, len(rest)):]
	}
	if last {
		switch {
		case g.bad:
			cmd.Reply = rBadFormat
		case g.keys == 0 && (g.op == OpGet || g.op == OpGets):
			// A streamed line that held no key: memcached counts too
			// few tokens.
			cmd.Reply = rError
		}
		p.gl = getLine{}
	}
	return n
}

// examine checks the next window of a streamed line and sets what piece
// hands out from it. It reports false when it must wait for more bytes.
func (p *Parser) examine(buf []byte) bool {
	g := &p.gl
	win := p.lim.MaxLineLen
	if nl := p.indexNewline(buf[:min(len(buf), win)]); nl >= 0 {
		end := nl
		// memcached strips a \r before the newline of a line longer than
		// one byte, which a streamed line always is.
		if end > 0 && buf[end-1] == '\r' {
			end--
		}
		if z := bytes.IndexByte(buf[:end], 0); z >= 0 {
			end = z
		}
		g.final, g.tail = true, nl+1-end
		if overlong(buf[:end]) {
			g.bad = true
			g.tail = nl + 1
			return true
		}
		g.ready = end
		return true
	}
	if len(buf) < win {
		return false
	}
	region := buf[:win]
	if z := bytes.IndexByte(region, 0); z >= 0 {
		// memcached reads a line up to its first NUL; the keys end here.
		g.final, g.tail = true, -1
		if overlong(region[:z]) {
			g.bad = true
		} else {
			g.ready = z
		}
		return true
	}
	// Complete keys are those a space follows; the token after the last
	// space may continue in the next read.
	ls := bytes.LastIndexByte(region, ' ')
	if ls < 0 || win-ls-1 > KeyMaxLen || overlong(region[:ls]) {
		g.bad, g.final, g.tail = true, true, -1
		return true
	}
	g.ready = ls
	return true
}

// addGetKey adds one key of a get-family command.
func addGetKey(cmd *Command, key []byte, op Opcode, ttl int32) {
	r := cmd.addReq()
	r.Kind = tiers.KindGet
	r.Text = true
	r.Key = cmd.own(key)
	r.WantValue = true
	r.WantFlags = true
	r.WantCAS = op == OpGets || op == OpGats
	if op == OpGat || op == OpGats {
		r.HasTTL = true
		r.TTL = int64(ttl)
	}
}
