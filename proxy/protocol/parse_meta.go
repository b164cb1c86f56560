package protocol

import (
	"math"

	"github.com/strata-cache/strata/tiers"
)

// maxOpaqueLen is the longest O token memcached echoes, counting its 'O'.
const maxOpaqueLen = 32

// metaOpts is what a meta command's flag tokens say. memcached reads every
// flag of every meta command the same way (a get flag on a set is accepted
// and ignored); each command then takes what applies to it.
type metaOpts struct {
	key    []byte // decoded when binary
	binary bool   // b
	mode   byte   // M's character, 0 when absent
	quiet  bool   // q

	ttl, vivifyTTL, recacheTTL int32
	hasTTL, vivify, recache    bool
	clientFlags                uint32
	cas                        uint64
	hasCAS                     bool
	delta, initial             uint64
	invalidate, noBump         bool

	value, wantCAS, wantFlags, wantTTL, wantLA, wantHit, wantSize bool

	opaque []byte // the whole O token, aliasing the line
}

// preparse reads the flag tokens from index start, recording every flag
// character in order into cmd for the reply. It returns nil, or the error
// reply memcached would send: a duplicate or unknown flag stops at once;
// other bad flags are all read and the last message recorded wins (a bad F
// keeps the message before it).
func (p *Parser) preparse(line []byte, start int, o *metaOpts, cmd *Command) []byte {
	t := &p.ws.tok
	var seen [2]uint64 // bitmap over flag characters 0..127
	var errMsg []byte
	for i := start; i < t.n; i++ {
		tok := t.tok(line, i)
		c := tok[0]
		if c >= 127 || seen[c>>6]&(1<<(c&63)) != 0 {
			return rDupFlag
		}
		seen[c>>6] |= 1 << (c & 63)
		arg := tok[1:]
		var ok bool
		switch c {
		case 'b':
			n := decodeBase64(p.ws.scratch[:], o.key)
			if n == 0 {
				errMsg = nonNil(errMsg, rDecodeKey, true)
			}
			o.key = p.ws.scratch[:n]
			o.binary = true
		case 'N':
			if o.vivifyTTL, ok = parseInt32(arg); !ok {
				errMsg = nonNil(errMsg, rBadToken, true)
			}
			o.vivify = true
		case 'T':
			if o.ttl, ok = parseInt32(arg); !ok {
				errMsg = nonNil(errMsg, rBadToken, true)
			}
			o.hasTTL = ok
		case 'R':
			if o.recacheTTL, ok = parseInt32(arg); !ok {
				errMsg = nonNil(errMsg, rBadToken, true)
			}
			o.recache = true
		case 'F':
			if o.clientFlags, ok = parseUint32(arg); !ok {
				errMsg = nonNil(errMsg, rBadFormat, false)
			}
		case 'C':
			if o.cas, ok = parseUint64(arg); !ok {
				errMsg = nonNil(errMsg, rBadToken, true)
			}
			o.hasCAS = ok
		case 'M':
			if len(tok) != 2 {
				errMsg = nonNil(errMsg, rMLength, true)
			} else {
				o.mode = tok[1]
			}
		case 'J':
			if o.initial, ok = parseUint64(arg); !ok {
				errMsg = nonNil(errMsg, rBadInitial, true)
			}
		case 'D':
			if o.delta, ok = parseUint64(arg); !ok {
				errMsg = nonNil(errMsg, rBadDeltaMeta, true)
			}
		case 'O':
			o.opaque = tok
		case 'q':
			o.quiet = true
		case 'u':
			o.noBump = true
		case 'I':
			o.invalidate = true
		case 'v':
			o.value = true
		case 'c':
			o.wantCAS = true
		case 'f':
			o.wantFlags = true
		case 't':
			o.wantTTL = true
		case 'l':
			o.wantLA = true
		case 'h':
			o.wantHit = true
		case 's':
			o.wantSize = true
		case 'k', 'P', 'L':
		default:
			return rInvalidFlag
		}
		cmd.flags[cmd.nflags] = c
		cmd.nflags++
	}
	return errMsg
}

// nonNil records an error: replace says whether this flag sets its own
// message (memcached's bad F flag only marks the failure, keeping the
// message already recorded or the default).
func nonNil(cur, msg []byte, replace bool) []byte {
	if replace || cur == nil {
		return msg
	}
	return cur
}

// metaHead runs the checks every meta command starts with and the flag
// preparse. ok is false when cmd already holds the answer.
func (p *Parser) metaHead(line []byte, cmd *Command, o *metaOpts, start int, tooMany, preErr []byte) bool {
	t := &p.ws.tok
	o.key = t.tok(line, 1)
	if t.ntokens() > maxMetaFlags {
		cmd.fail(tooMany, false)
		return false
	}
	if e := p.preparse(line, start, o, cmd); e != nil {
		if preErr != nil {
			e = preErr
		}
		cmd.fail(e, false)
		return false
	}
	return true
}

// meta dispatches the two-letter meta commands.
func (p *Parser) meta(buf []byte, consumed int, line []byte, cmd *Command) (int, error) {
	t := &p.ws.tok
	nt := t.ntokens()
	sub := line[t.start[0]+1]
	switch sub {
	case 'n':
		cmd.Op = OpMetaNoop
		return consumed, nil
	case 'e':
		p.mdebug(line, cmd)
		return consumed, nil
	case 'g', 's', 'd', 'a':
	default:
		cmd.fail(rError, false)
		return consumed, nil
	}
	if nt < 3 {
		cmd.fail(rError, false)
		return consumed, nil
	}
	if t.end[1]-t.start[1] > KeyMaxLen {
		cmd.fail(rBadFormat, false)
		return consumed, nil
	}
	o := metaOpts{delta: 1}
	switch sub {
	case 'g':
		if p.metaHead(line, cmd, &o, 2, rFlagsTooLongMG, nil) {
			p.mget(cmd, &o)
		}
	case 's':
		return p.mset(buf, consumed, line, cmd, &o)
	case 'd':
		if p.metaHead(line, cmd, &o, 2, rFlagsTooLong, rInvalidOrDup) {
			p.mdelete(cmd, &o)
		}
	case 'a':
		if p.metaHead(line, cmd, &o, 2, rFlagsTooLong, rInvalidOrDup) {
			p.marith(cmd, &o)
		}
	}
	return consumed, nil
}

// metaCommon stores what every meta command keeps for its reply.
func metaCommon(cmd *Command, o *metaOpts, op Opcode) *tiers.Request {
	cmd.Op = op
	cmd.NoReply = o.quiet
	cmd.base64Key = o.binary
	if o.opaque != nil {
		cmd.opaque = cmd.own(o.opaque)
	}
	r := cmd.addReq()
	r.Key = cmd.own(o.key)
	r.KeyBinary = o.binary
	return r
}

func (p *Parser) mget(cmd *Command, o *metaOpts) {
	if len(o.opaque) > maxOpaqueLen {
		cmd.fail(rOpaqueTooLong, false)
		return
	}
	cmd.reserve(len(o.key) + len(o.opaque))
	r := metaCommon(cmd, o, OpMetaGet)
	r.Kind = tiers.KindGet
	r.WantValue = o.value
	r.WantCAS = o.wantCAS
	r.WantFlags = o.wantFlags
	r.WantTTL = o.wantTTL
	r.WantLastAccess = o.wantLA
	r.WantHit = o.wantHit
	r.WantSize = o.wantSize
	r.NoBump = o.noBump
	r.TTL, r.HasTTL = int64(o.ttl), o.hasTTL
	r.Vivify, r.VivifyTTL = o.vivify, int64(o.vivifyTTL)
	r.Recache, r.RecacheTTL = o.recache, int64(o.recacheTTL)
}

// mset: "ms <key> <datalen> <flags>*". Once the data length is known every
// refusal swallows the data block, as memcached does.
func (p *Parser) mset(buf []byte, consumed int, line []byte, cmd *Command, o *metaOpts) (int, error) {
	t := &p.ws.tok
	nt := t.ntokens()
	if nt == 3 {
		cmd.fail(rBadFormat, false)
		return consumed, nil
	}
	if nt > maxMetaFlags {
		cmd.fail(rFlagsTooLong, false)
		return consumed, nil
	}
	vlen, ok := parseInt32(t.tok(line, 2))
	if !ok || vlen < 0 || vlen > math.MaxInt32-2 {
		cmd.fail(rBadFormat, false)
		return consumed, nil
	}
	dataLen := int(vlen) + 2
	refuse := func(reply []byte) (int, error) {
		cmd.fail(reply, false)
		p.swallow = int64(dataLen)
		return consumed, nil
	}
	o.key = t.tok(line, 1)
	if e := p.preparse(line, 3, o, cmd); e != nil {
		return refuse(e)
	}
	var mode tiers.Mode
	switch o.mode {
	case 0, 'S':
		mode = tiers.ModeSet
	case 'E':
		mode = tiers.ModeAdd
	case 'A':
		mode = tiers.ModeAppend
	case 'P':
		mode = tiers.ModePrepend
	case 'R':
		mode = tiers.ModeReplace
	default:
		return refuse(rInvalidModeMS)
	}
	if len(o.opaque) > maxOpaqueLen {
		return refuse(rOpaqueTooLong)
	}
	if p.lim.tooLarge(len(o.key), o.clientFlags, int64(dataLen)) {
		n, err := refuse(rTooLarge)
		cmd.failDropping(rTooLarge, false, o.key)
		return n, err
	}
	end := consumed + dataLen
	if len(buf) < end {
		cmd.Reset()
		return 0, nil
	}
	data := buf[consumed:end]
	if data[dataLen-2] != '\r' || data[dataLen-1] != '\n' {
		// Quiet mode never hides errors.
		cmd.fail(rBadChunk, false)
		return end, nil
	}
	cmd.reserve(len(o.key) + len(o.opaque) + int(vlen))
	r := metaCommon(cmd, o, OpMetaSet)
	r.Kind = tiers.KindSet
	r.Mode = mode
	r.Value = cmd.own(data[:vlen])
	r.ClientFlags = o.clientFlags
	r.TTL, r.HasTTL = int64(o.ttl), o.hasTTL
	r.CompareCAS, r.HasCompareCAS = o.cas, o.hasCAS
	r.Invalidate = o.invalidate
	r.WantCAS = o.wantCAS
	return end, nil
}

func (p *Parser) mdelete(cmd *Command, o *metaOpts) {
	if len(o.opaque) > maxOpaqueLen {
		cmd.fail(rOpaqueTooLong, false)
		return
	}
	cmd.reserve(len(o.key) + len(o.opaque))
	r := metaCommon(cmd, o, OpMetaDelete)
	r.Kind = tiers.KindDelete
	r.CompareCAS, r.HasCompareCAS = o.cas, o.hasCAS
	r.Invalidate = o.invalidate
	r.TTL, r.HasTTL = int64(o.ttl), o.hasTTL
}

// marith: memcached checks an oversized opaque only after applying the
// operation; the proxy refuses it before, with the same reply.
func (p *Parser) marith(cmd *Command, o *metaOpts) {
	mode := tiers.ModeIncr
	switch o.mode {
	case 0, 'I', '+':
	case 'D', '-':
		mode = tiers.ModeDecr
	default:
		cmd.fail(rInvalidModeMA, false)
		return
	}
	if len(o.opaque) > maxOpaqueLen {
		cmd.fail(rOpaqueTooLong, false)
		return
	}
	cmd.reserve(len(o.key) + len(o.opaque))
	r := metaCommon(cmd, o, OpMetaArith)
	r.Kind = tiers.KindArith
	r.Mode = mode
	r.Delta, r.Initial = o.delta, o.initial
	r.Vivify, r.VivifyTTL = o.vivify, int64(o.vivifyTTL)
	r.TTL, r.HasTTL = int64(o.ttl), o.hasTTL
	r.CompareCAS, r.HasCompareCAS = o.cas, o.hasCAS
	r.WantValue = o.value
	r.WantCAS = o.wantCAS
	r.WantTTL = o.wantTTL
}

// mdebug parses "me <key> [b]". Reply is memcached's answer for an absent
// item, which stands when the tier has no per-item data to show; Args hold
// the key as sent (Args[0], printed back) and decoded (Args[1]).
func (p *Parser) mdebug(line []byte, cmd *Command) {
	t := &p.ws.tok
	nt := t.ntokens()
	if nt < 3 || t.end[1]-t.start[1] > KeyMaxLen {
		cmd.fail(rBadFormat, false)
		return
	}
	key := t.tok(line, 1)
	decoded := key
	if nt >= 4 && eq(t.tok(line, 2), "b") {
		n := decodeBase64(p.ws.scratch[:], key)
		if n == 0 {
			cmd.fail(rBadFormat, false)
			return
		}
		decoded = p.ws.scratch[:n]
	}
	cmd.reserve(len(key) + len(decoded))
	cmd.Op = OpMetaDebug
	cmd.Reply = rEN
	cmd.Args = append(cmd.Args, cmd.own(key), cmd.own(decoded))
}
