package protocol

import "bytes"

// Authentication, as memcached does it with -Y (text) and -S (binary
// SASL). With Limits.Auth set, a connection answers nothing but its
// authentication until one attempt succeeds:
//
//   - text: a set whose value is "user password" (key, flags and exptime
//     are ignored) answers STORED and authenticates; any other line
//     answers CLIENT_ERROR unauthenticated, consuming only the line.
//   - binary: SASL list mechanisms answers PLAIN, SASL auth with PLAIN
//     ("authzid\0user\0password") authenticates, version is served, and
//     any other opcode answers status 0x20 and closes.
//
// Each attempt comes out as an OpAuth Command whose Reply is the answer
// and whose Args[0] is the user named, so the proxy can count, log and
// slow failures; AuthFailed reports the verdict.

// Authenticator checks a user's password. auth.Users implements it.
type Authenticator interface {
	Check(user, pass []byte) bool
}

var (
	rUnauthenticated = reply("CLIENT_ERROR unauthenticated")
	rAuthTermination = reply("CLIENT_ERROR bad command line termination")
	rAuthFormat      = reply("CLIENT_ERROR bad authentication token format")
	rAuthFailure     = reply("CLIENT_ERROR authentication failure")
	rStored          = reply("STORED")

	errBinUnauth = &closeError{"binary request before authentication"}
)

const (
	// authLineMax: memcached closes an unauthenticated text connection
	// that sends more than this without a newline.
	authLineMax = 1024
	// authValueMax bounds the value of an authentication set the parser
	// buffers; credentials are short, and a longer value is refused and
	// swallowed rather than held (memcached would buffer it).
	authValueMax = 4096
)

// AuthFailed reports whether an OpAuth Command's attempt failed.
func (c *Command) AuthFailed() bool { return c.Op == OpAuth && c.authFailed }

// Authenticated reports whether the connection has authenticated (always
// true without Limits.Auth).
func (p *Parser) Authenticated() bool { return p.lim.Auth == nil || p.authed }

// textAuth reads one request of an unauthenticated text connection.
func (p *Parser) textAuth(buf []byte, cmd *Command) (int, error) {
	if len(buf) < 2 {
		return 0, nil
	}
	nl := bytes.IndexByte(buf, '\n')
	if nl < 0 {
		if len(buf) > authLineMax {
			cmd.Close = true
			return 0, errLongLine
		}
		return 0, nil
	}
	line := buf[:nl]
	if z := bytes.IndexByte(line, 0); z >= 0 {
		line = line[:z]
	}
	line = bytes.TrimSuffix(line, []byte("\r"))
	t := &p.ws.tok
	t.split(line)
	var size uint32
	ok := t.ntokens() >= 6 && eq(t.tok(line, 0), "set")
	if ok {
		size, ok = parseUint32(t.tok(line, 4))
	}
	if !ok {
		cmd.fail(rUnauthenticated, false)
		return nl + 1, nil
	}
	if size > authValueMax {
		cmd.fail(rAuthFailure, false)
		cmd.Op, cmd.authFailed = OpAuth, true
		p.swallow = int64(size) + 2
		return nl + 1, nil
	}
	end := nl + 1 + int(size) + 2
	if len(buf) < end {
		return 0, nil
	}
	data := buf[nl+1 : end]
	if !bytes.HasSuffix(data, []byte(crlf)) {
		cmd.fail(rAuthTermination, false)
		return end, nil
	}
	data = data[:size]
	if z := bytes.IndexByte(data, 0); z >= 0 {
		data = data[:z]
	}
	t.split(data)
	if t.ntokens() < 3 {
		cmd.fail(rAuthFormat, false)
		return end, nil
	}
	p.authAttempt(cmd, t.tok(data, 0), t.tok(data, 1))
	if cmd.authFailed {
		cmd.Reply = rAuthFailure
	} else {
		cmd.Reply = rStored
	}
	return end, nil
}

// authAttempt checks user and pass and records the attempt in cmd.
func (p *Parser) authAttempt(cmd *Command, user, pass []byte) {
	cmd.Op = OpAuth
	cmd.reserve(len(user))
	cmd.Args = append(cmd.Args, cmd.own(user))
	cmd.authFailed = !p.lim.Auth.Check(user, pass)
	p.authed = !cmd.authFailed
}

// binAuth answers the SASL opcodes of a connection that requires
// authentication. head is what the header, extras and key took; the
// value of auth and step follows. It returns what Parse returns.
func (p *Parser) binAuth(buf []byte, head int, op uint8, key []byte, bodylen int64, cmd *Command) (int, error) {
	if op == binSASLList {
		cmd.Op = OpReply
		cmd.rbuf = cmd.appendBinHeader(cmd.rbuf[:0], BinStatusOK, 0, 0, len("PLAIN"), 0)
		cmd.Reply = append(cmd.rbuf, "PLAIN"...)
		return head, nil
	}
	vlen := bodylen - int64(len(key))
	if len(key) > binMaxSASLMech {
		cmd.binFail(BinStatusInvalid, nil)
		p.swallow = vlen
		return head, nil
	}
	if vlen > authValueMax {
		cmd.binFail(BinStatusNoMemory, nil)
		p.swallow = vlen
		return head, nil
	}
	end := head + int(vlen)
	if len(buf) < end {
		return 0, nil
	}
	// PLAIN is "authzid NUL authcid NUL password"; a step never follows
	// it, so a step, another mechanism or a malformed message fails.
	parts := bytes.Split(buf[head:end], []byte{0})
	if op != binSASLAuth || string(key) != "PLAIN" || len(parts) != 3 {
		p.authAttempt(cmd, nil, nil)
		cmd.authFailed, p.authed = true, false
	} else {
		p.authAttempt(cmd, parts[1], parts[2])
	}
	if cmd.authFailed {
		cmd.rbuf = cmd.appendBinError(cmd.rbuf[:0], BinStatusAuthError, "")
	} else {
		cmd.rbuf = cmd.appendBinHeader(cmd.rbuf[:0], BinStatusOK, 0, 0, len("Authenticated"), 0)
		cmd.rbuf = append(cmd.rbuf, "Authenticated"...)
	}
	cmd.Reply = cmd.rbuf
	return end, nil
}
