package protocol

import (
	"errors"

	"github.com/strata-cache/strata/tiers"
)

// Opcode names the client command a Command came from. The tiers only see
// Requests; the Opcode decides how their Results are spelt back.
type Opcode uint8

const (
	OpNone       Opcode = iota // bytes consumed, nothing to answer
	OpGet                      // get, bget
	OpGets                     // gets
	OpGat                      // gat
	OpGats                     // gats
	OpSet                      // set
	OpAdd                      // add
	OpReplace                  // replace
	OpAppend                   // append
	OpPrepend                  // prepend
	OpCas                      // cas
	OpDelete                   // delete
	OpIncr                     // incr
	OpDecr                     // decr
	OpTouch                    // touch
	OpFlushAll                 // flush_all: one KindFlush Request, TTL = delay
	OpVersion                  // version: the proxy answers (AppendReply with res[0].Value, or AppendVersion)
	OpVerbosity                // verbosity: Args[0] is the level; the reply is OK
	OpStats                    // stats [args...]: the proxy answers with AppendStat* and AppendEnd
	OpQuit                     // quit: close after the replies before it
	OpMetaGet                  // mg
	OpMetaSet                  // ms
	OpMetaDelete               // md
	OpMetaArith                // ma
	OpMetaNoop                 // mn
	OpMetaDebug                // me: Reply holds the answer for an absent item; Args[0] the key as sent, Args[1] decoded
	OpAdmin                    // cache_memlimit, slabs automove, lru_crawler: Args are every token, the name first
	OpError                    // Reply holds the whole reply the parser decided on
	OpReply                    // binary noop, version and SASL: Reply holds the answer, not an error
	OpAuth                     // an authentication attempt (auth.go): Reply holds the answer, Args[0] the user
)

var opNames = [...]string{"none", "get", "gets", "gat", "gats", "set", "add", "replace", "append",
	"prepend", "cas", "delete", "incr", "decr", "touch", "flush_all", "version", "verbosity", "stats",
	"quit", "mg", "ms", "md", "ma", "mn", "me", "admin", "error", "reply", "auth"}

func (o Opcode) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "unknown"
}

// IsMeta reports whether o is a meta-protocol command.
func (o Opcode) IsMeta() bool { return o >= OpMetaGet && o <= OpMetaDebug }

// ErrClose means memcached would close the connection at this point: the
// proxy stops parsing and closes (after the replies before it for quit;
// see the package documentation). Parse returns it wrapped in an error
// that says why; test with errors.Is.
var ErrClose = errors.New("protocol: close connection")

// closeError is a reason to close that still matches ErrClose. The values
// are preallocated so closing costs no allocation.
type closeError struct{ reason string }

func (e *closeError) Error() string        { return "protocol: close connection: " + e.reason }
func (e *closeError) Is(target error) bool { return target == ErrClose }

var (
	errQuit        = &closeError{"quit"}
	errHTTP        = &closeError{"HTTP request"}
	errLongLine    = &closeError{"request line too long without a newline"}
	errLineTooLong = &closeError{"request line longer than the read buffer"}
	errLeadSpace   = &closeError{"long line with too many leading spaces"}
)

// maxMetaFlags bounds the flag tokens of a meta command: memcached refuses
// a meta line of more than 20 tokens counting the command, the key and its
// own end marker, so at most 17 flags (ms: 16 after the data length) pass.
const maxMetaFlags = 20

// Command is one parsed client request. It is reused from one Parse to the
// next: every slice it holds (Reqs and their Key/Value, Args, Reply) stays
// valid until the Command is passed to Parse again or Reset. A Command is
// not safe for concurrent use.
type Command struct {
	Op Opcode
	// Reqs has one Request per key; multi-key get/gets/gat/gats have
	// several, gat with no key has none. Keys and values are copies owned
	// by the Command.
	Reqs []tiers.Request
	// NoReply is text noreply or meta q. AppendReply already honours it;
	// the proxy needs it only to know a reply may be empty.
	NoReply bool
	// Args are the arguments of stats and verbosity, the tokens of an
	// administration command and the key of me, owned by the Command.
	Args [][]byte
	// Reply is the complete answer (with \r\n) for replies the parser
	// decides alone: OpError, OpMetaDebug, and the last words before an
	// ErrClose. It is read-only: it may point at shared constants.
	Reply []byte
	// Close: close the connection after writing this command's reply.
	Close bool

	// A get-family line comes in pieces (parse_get.go): more says later
	// pieces follow (no END), first that this is the line's first, and
	// line is the parser's record of the pieces' replies.
	more, first bool
	line        *lineReply

	// arena owns the bytes of keys, values, args and the opaque token.
	arena []byte
	// Meta return flags in request order, as memcached prints them.
	flags  [maxMetaFlags]byte
	nflags int
	// opaque is the whole O token (with its 'O'), inside arena.
	opaque []byte
	// base64Key: the key arrived base64 encoded (b flag); print it so.
	base64Key bool

	// bin is set for a binary-protocol request (binary.go); rbuf holds
	// the replies the parser spells for it, so Reply never aliases a
	// shared constant that an append could overwrite.
	bin  binReq
	rbuf []byte
	// authFailed: an OpAuth attempt was refused.
	authFailed bool
}

// Reset clears c for reuse, keeping the capacity it has grown.
func (c *Command) Reset() {
	c.Op = OpNone
	c.Reqs = c.Reqs[:0]
	c.NoReply = false
	c.Args = c.Args[:0]
	c.Reply = nil
	c.Close = false
	c.arena = c.arena[:0]
	c.nflags = 0
	c.opaque = nil
	c.base64Key = false
	c.bin = binReq{}
	c.authFailed = false
	c.more, c.first, c.line = false, false, nil
}

// More reports whether c is a piece of a get-family line that later pieces
// continue: its reply has no END.
func (c *Command) More() bool { return c.more }

// reserve makes room for n more arena bytes so that slices already handed
// out never move. Callers reserve the whole request's worth up front.
func (c *Command) reserve(n int) {
	if cap(c.arena)-len(c.arena) >= n {
		return
	}
	size := len(c.arena) + n
	if size < 2*cap(c.arena) {
		size = 2 * cap(c.arena)
	}
	if size < 256 {
		size = 256
	}
	c.arena = make([]byte, 0, size)
}

// own copies b into the arena and returns the copy, capped so an append
// by a user can never spill into a neighbour.
func (c *Command) own(b []byte) []byte {
	start := len(c.arena)
	c.arena = append(c.arena, b...)
	return c.arena[start:len(c.arena):len(c.arena)]
}

// addReq appends a zeroed Request and returns it.
func (c *Command) addReq() *tiers.Request {
	if len(c.Reqs) < cap(c.Reqs) {
		c.Reqs = c.Reqs[:len(c.Reqs)+1]
		c.Reqs[len(c.Reqs)-1] = tiers.Request{}
	} else {
		c.Reqs = append(c.Reqs, tiers.Request{})
	}
	return &c.Reqs[len(c.Reqs)-1]
}

// fail turns c into a parser-decided reply. A suppressed reply (text
// noreply) leaves nothing to answer.
func (c *Command) fail(reply []byte, suppressed bool) {
	c.Reqs = c.Reqs[:0]
	c.Args = c.Args[:0]
	if suppressed {
		c.Op = OpNone
		c.Reply = nil
		return
	}
	c.Op = OpError
	c.Reply = reply
}

// failDropping is fail for a refused store: memcached unlinks the key's old
// item before it finds the new one too large (text set; ms in every mode),
// so the command still carries a delete of key. The reply is the error,
// or nothing when suppressed.
func (c *Command) failDropping(reply []byte, suppressed bool, key []byte) {
	c.fail(reply, false)
	if suppressed {
		c.Reply = nil
	}
	c.reserve(len(key))
	r := c.addReq()
	r.Kind = tiers.KindDelete
	r.Key = c.own(key)
}

// MetaFlags returns the meta return flags of c in request order (only the
// flag characters; the opaque token is returned by Opaque). The result
// aliases c.
func (c *Command) MetaFlags() []byte { return c.flags[:c.nflags] }

// Opaque returns the whole O token of a meta command, or nil.
func (c *Command) Opaque() []byte { return c.opaque }

// Base64Key reports whether the meta key arrived base64 encoded.
func (c *Command) Base64Key() bool { return c.base64Key }
