package protocol

import (
	"bytes"
	"encoding/binary"

	"github.com/strata-cache/strata/tiers"
)

// memcached's binary protocol, chosen by a connection whose first byte is
// the request magic and kept for the connection's life. A request is a
// 24-byte header (magic, opcode, key length, extras length, data type,
// vbucket, body length, opaque, CAS), then extras, key and value. The
// parser follows memcached 1.6.18's proto_bin.c: it waits for the header,
// extras and key, checks the lengths in memcached's order, and only then
// reads a value. The requests become the tiers.Requests of their text
// twins; Command.bin remembers how to spell the reply.

const (
	binReqMagic  = 0x80
	binResMagic  = 0x81
	binHeaderLen = 24
	// binMaxSASLMech is memcached's longest SASL mechanism name.
	binMaxSASLMech = 32
)

// Binary opcodes memcached 1.6.18 serves.
const (
	binGet       = 0x00
	binSet       = 0x01
	binAdd       = 0x02
	binReplace   = 0x03
	binDelete    = 0x04
	binIncr      = 0x05
	binDecr      = 0x06
	binQuit      = 0x07
	binFlush     = 0x08
	binGetQ      = 0x09
	binNoop      = 0x0a
	binVersion   = 0x0b
	binGetK      = 0x0c
	binGetKQ     = 0x0d
	binAppend    = 0x0e
	binPrepend   = 0x0f
	binStat      = 0x10
	binSetQ      = 0x11
	binAddQ      = 0x12
	binReplaceQ  = 0x13
	binDeleteQ   = 0x14
	binIncrQ     = 0x15
	binDecrQ     = 0x16
	binQuitQ     = 0x17
	binFlushQ    = 0x18
	binAppendQ   = 0x19
	binPrependQ  = 0x1a
	binTouch     = 0x1c
	binGat       = 0x1d
	binGatQ      = 0x1e
	binSASLList  = 0x20
	binSASLAuth  = 0x21
	binSASLStep  = 0x22
	binGatK      = 0x23
	binGatKQ     = 0x24
	binOpcodeMax = 0x100
)

// Binary response statuses, as memcached sends them.
const (
	BinStatusOK             uint16 = 0x00
	BinStatusKeyNotFound    uint16 = 0x01
	BinStatusKeyExists      uint16 = 0x02
	BinStatusTooLarge       uint16 = 0x03
	BinStatusInvalid        uint16 = 0x04
	BinStatusNotStored      uint16 = 0x05
	BinStatusNonNumeric     uint16 = 0x06
	BinStatusAuthError      uint16 = 0x20
	BinStatusAuthContinue   uint16 = 0x21
	BinStatusUnknownCommand uint16 = 0x81
	BinStatusNoMemory       uint16 = 0x82
	// BinStatusInternal answers a tier failure, which memcached itself
	// never meets: the body carries the reason, as SERVER_ERROR does.
	BinStatusInternal uint16 = 0x84
)

// binQuietOf maps a quiet opcode onto its loud twin, as memcached does
// before it looks at the command.
var binQuietOf = [binOpcodeMax]uint8{
	binSetQ: binSet, binAddQ: binAdd, binReplaceQ: binReplace, binDeleteQ: binDelete,
	binIncrQ: binIncr, binDecrQ: binDecr, binQuitQ: binQuit, binFlushQ: binFlush,
	binAppendQ: binAppend, binPrependQ: binPrepend, binGetQ: binGet, binGetKQ: binGetK,
	binGatQ: binGat, binGatKQ: binGatK,
}

// binReq is what a binary Command's reply needs from its request. The zero
// value means the Command is text or meta.
type binReq struct {
	on      bool
	opcode  uint8   // as received: the reply echoes it
	quiet   bool    // a quiet opcode: successes answer nothing, get misses too
	withKey bool    // getk, gatk: the reply carries the key
	opaque  [4]byte // echoed untouched
}

var (
	errBadMagic   = &closeError{"binary request with a bad magic byte"}
	errBinLength  = &closeError{"binary request whose lengths do not add up"}
	errBinInvalid = &closeError{"binary request with invalid arguments"}
)

// Binary reports whether c came from the binary protocol.
func (c *Command) Binary() bool { return c.bin.on }

// parseBinary reads one binary request from buf, as Parse does.
func (p *Parser) parseBinary(buf []byte, cmd *Command) (int, error) {
	if len(buf) < binHeaderLen {
		return 0, nil
	}
	if buf[0] != binReqMagic {
		// memcached closes without a word.
		cmd.Close = true
		return 0, errBadMagic
	}
	opcode := buf[1]
	keylen := int(binary.BigEndian.Uint16(buf[2:]))
	extlen := int(buf[4])
	bodylen := int64(binary.BigEndian.Uint32(buf[8:]))
	cas := binary.BigEndian.Uint64(buf[16:])
	head := binHeaderLen + extlen + keylen
	if len(buf) < head {
		return 0, nil
	}
	cmd.bin = binReq{on: true, opcode: opcode}
	copy(cmd.bin.opaque[:], buf[12:16])
	ext := buf[binHeaderLen : binHeaderLen+extlen]
	key := buf[binHeaderLen+extlen : head]

	if int64(keylen) > bodylen || int64(keylen+extlen) > bodylen {
		cmd.binFail(BinStatusUnknownCommand, nil)
		cmd.Close = true
		return head, errBinLength
	}
	if p.lim.Auth != nil && !p.authed {
		switch opcode {
		case binSASLList, binSASLAuth, binSASLStep, binVersion:
		default:
			cmd.binFail(BinStatusAuthError, nil)
			cmd.Close = true
			return head, errBinUnauth
		}
	}
	if keylen > KeyMaxLen {
		cmd.binFail(BinStatusInvalid, nil)
		cmd.Close = true
		return head, errBinInvalid
	}
	op := opcode
	if q := binQuietOf[opcode]; q != 0 || opcode == binGetQ {
		op = q
		cmd.bin.quiet = true
	}
	ok := true
	switch op {
	case binVersion:
		if ok = extlen == 0 && keylen == 0 && bodylen == 0; ok {
			cmd.Op = OpReply
			cmd.rbuf = cmd.appendBinHeader(cmd.rbuf[:0], BinStatusOK, 0, 0, len(MemcachedVersion), 0)
			cmd.Reply = append(cmd.rbuf, MemcachedVersion...)
		}
	case binNoop:
		if ok = extlen == 0 && keylen == 0 && bodylen == 0; ok {
			cmd.Op = OpReply
			cmd.Reply = cmd.appendBinHeader(cmd.rbuf[:0], BinStatusOK, 0, 0, 0, 0)
		}
	case binQuit:
		if ok = extlen == 0 && keylen == 0 && bodylen == 0; ok {
			cmd.Op = OpQuit
			cmd.Close = true
			if !cmd.bin.quiet {
				cmd.Reply = cmd.appendBinHeader(cmd.rbuf[:0], BinStatusOK, 0, 0, 0, 0)
			}
			return head, errQuit
		}
	case binFlush:
		if ok = keylen == 0 && bodylen == int64(extlen) && (extlen == 0 || extlen == 4); ok {
			p.binFlush(cmd, ext)
		}
	case binSet, binAdd, binReplace:
		if ok = extlen == 8 && keylen != 0 && bodylen >= int64(keylen+8); ok {
			return p.binStore(buf, head, bodylen-int64(keylen+extlen), key, ext, cas, op, cmd)
		}
	case binAppend, binPrepend:
		if ok = keylen > 0 && extlen == 0; ok {
			return p.binStore(buf, head, bodylen-int64(keylen), key, ext, cas, op, cmd)
		}
	case binGet, binGetK:
		if ok = extlen == 0 && bodylen == int64(keylen) && keylen > 0; ok {
			cmd.bin.withKey = op == binGetK
			binGetReq(cmd, OpGet, key, nil)
		}
	case binTouch, binGat, binGatK:
		if ok = extlen == 4 && keylen != 0; ok {
			cmd.bin.withKey = op == binGatK
			o := OpGat
			if op == binTouch {
				o = OpTouch
			}
			binGetReq(cmd, o, key, ext)
		}
	case binDelete:
		if ok = keylen > 0 && extlen == 0 && bodylen == int64(keylen); ok {
			r := cmd.binReq(OpDelete, tiers.KindDelete, key)
			if cas != 0 {
				r.CompareCAS, r.HasCompareCAS = cas, true
			}
		}
	case binIncr, binDecr:
		if ok = keylen > 0 && extlen == 20 && bodylen == int64(keylen+extlen); ok {
			binArith(cmd, op, key, ext, cas)
		}
	case binStat:
		if ok = extlen == 0; ok {
			cmd.Op = OpStats
			if keylen > 0 {
				// The key is the text command's arguments.
				cmd.reserve(keylen)
				for _, f := range bytes.Fields(key) {
					cmd.Args = append(cmd.Args, cmd.own(f))
				}
			}
		}
	case binSASLList:
		if ok = extlen == 0 && keylen == 0 && bodylen == 0; ok {
			if p.lim.Auth != nil {
				return p.binAuth(buf, head, op, key, bodylen, cmd)
			}
			cmd.binFail(BinStatusUnknownCommand, nil)
		}
	case binSASLAuth, binSASLStep:
		if ok = extlen == 0 && keylen != 0; ok {
			if p.lim.Auth != nil {
				return p.binAuth(buf, head, op, key, bodylen, cmd)
			}
			// Without SASL memcached refuses and swallows the data.
			cmd.binFail(BinStatusUnknownCommand, nil)
			p.swallow = bodylen - int64(keylen)
		}
	default:
		// memcached swallows a whole body after the extras and key it
		// has already read: a quirk kept, so the bytes line up as its do.
		cmd.binFail(BinStatusUnknownCommand, nil)
		p.swallow = bodylen
	}
	if !ok {
		cmd.binFail(BinStatusInvalid, nil)
		cmd.Close = true
		return head, errBinInvalid
	}
	return head, nil
}

// binReq sets cmd's opcode and appends its one Request for key, a text
// request as its text twin would make.
func (c *Command) binReq(op Opcode, kind tiers.Kind, key []byte) *tiers.Request {
	c.reserve(len(key))
	c.Op = op
	r := c.addReq()
	r.Kind = kind
	r.Text = true
	r.Key = c.own(key)
	return r
}

// binGetReq makes get, getk, touch, gat, gatk (and their quiet forms). A
// binary hit always carries flags and CAS, so the twin is gets (gats), not
// get: WantCAS keeps the read at the tier of record.
func binGetReq(cmd *Command, op Opcode, key, ext []byte) {
	r := cmd.binReq(op, tiers.KindGet, key)
	r.WantFlags = true
	r.WantCAS = true
	r.WantValue = op != OpTouch
	if ext != nil {
		r.TTL = int64(binary.BigEndian.Uint32(ext))
		r.HasTTL = true
	}
}

// binArith makes incr and decr: extras are delta, initial value and
// expiration; an expiration of all ones means "do not create".
func binArith(cmd *Command, op uint8, key, ext []byte, cas uint64) {
	o, mode := OpIncr, tiers.ModeIncr
	if op == binDecr {
		o, mode = OpDecr, tiers.ModeDecr
	}
	r := cmd.binReq(o, tiers.KindArith, key)
	r.Mode = mode
	r.Delta = binary.BigEndian.Uint64(ext)
	r.WantCAS = true
	if exp := binary.BigEndian.Uint32(ext[16:]); exp != 0xffffffff {
		r.Vivify = true
		r.Initial = binary.BigEndian.Uint64(ext[8:])
		r.VivifyTTL = int64(exp)
	}
	if cas != 0 {
		r.CompareCAS, r.HasCompareCAS = cas, true
	}
	cmd.NoReply = cmd.bin.quiet
}

func (p *Parser) binFlush(cmd *Command, ext []byte) {
	if p.lim.DisableFlush {
		// memcached -F answers a binary flush with an auth error.
		cmd.binFail(BinStatusAuthError, nil)
		return
	}
	cmd.Op = OpFlushAll
	cmd.NoReply = cmd.bin.quiet
	r := cmd.addReq()
	r.Kind = tiers.KindFlush
	r.Text = true
	if len(ext) == 4 {
		r.TTL = int64(binary.BigEndian.Uint32(ext))
		r.HasTTL = true
	}
}

// binStore makes set, add, replace (extras: flags, expiration) and
// append, prepend (no extras). A CAS turns set, add and replace into the
// text cas; append and prepend then compare it too.
func (p *Parser) binStore(buf []byte, head int, vlen int64, key, ext []byte, cas uint64, op uint8, cmd *Command) (int, error) {
	var flags, exp uint32
	if len(ext) == 8 {
		flags = binary.BigEndian.Uint32(ext)
		exp = binary.BigEndian.Uint32(ext[4:])
	}
	if p.lim.tooLarge(len(key), flags, vlen+2) {
		// Refused before the value is read, which is then swallowed; a
		// set first drops the key's old item, as the text set does.
		if op == binSet {
			cmd.failDropping(nil, false, key)
		}
		cmd.binFail(BinStatusTooLarge, nil)
		p.swallow = vlen
		return head, nil
	}
	end := head + int(vlen)
	if len(buf) < end {
		return 0, nil
	}
	var o Opcode
	switch op {
	case binSet:
		o = OpSet
	case binAdd:
		o = OpAdd
	case binReplace:
		o = OpReplace
	case binAppend:
		o = OpAppend
	case binPrepend:
		o = OpPrepend
	}
	mode := textModes[o]
	if cas != 0 && len(ext) == 8 {
		o, mode = OpCas, tiers.ModeSet
	}
	cmd.reserve(len(key) + int(vlen))
	r := cmd.binReq(o, tiers.KindSet, key)
	r.Mode = mode
	r.Value = cmd.own(buf[head:end])
	r.ClientFlags = flags
	r.TTL = int64(exp)
	r.HasTTL = true
	r.WantCAS = true
	if cas != 0 {
		r.CompareCAS, r.HasCompareCAS = cas, true
	}
	cmd.NoReply = cmd.bin.quiet
	return end, nil
}
