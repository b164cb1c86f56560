package protocol

import (
	"math"

	"github.com/strata-cache/strata/tiers"
)

// Text-protocol commands. Each function runs with p.ws.tok holding the split
// line and follows memcached's order of checks, because the first failing
// check picks the error text, and "noreply" (which memcached only notices
// as the last token) silences the errors found after it is noticed.

// noreply reports memcached's noreply test: the last token is "noreply".
func (p *Parser) noreply(line []byte) bool {
	return eq(p.ws.tok.tok(line, p.ws.tok.n-1), "noreply")
}

// update handles set/add/replace/append/prepend/cas, whose data block
// follows the line. It returns what Parse returns.
func (p *Parser) update(buf []byte, consumed int, line []byte, cmd *Command, op Opcode) (int, error) {
	t := &p.ws.tok
	noreply := p.noreply(line)
	key := t.tok(line, 1)
	if len(key) > KeyMaxLen {
		cmd.fail(rBadFormat, noreply)
		return consumed, nil
	}
	flags, ok1 := parseUint32(t.tok(line, 2))
	exptime, ok2 := parseInt32(t.tok(line, 3))
	vlen, ok3 := parseInt32(t.tok(line, 4))
	if !ok1 || !ok2 || !ok3 {
		cmd.fail(rBadFormat, noreply)
		return consumed, nil
	}
	var cas uint64
	if op == OpCas {
		var ok bool
		if cas, ok = parseUint64(t.tok(line, 5)); !ok {
			cmd.fail(rBadFormat, noreply)
			return consumed, nil
		}
	}
	if vlen < 0 || vlen > math.MaxInt32-2 {
		cmd.fail(rBadFormat, noreply)
		return consumed, nil
	}
	dataLen := int(vlen) + 2
	if p.lim.tooLarge(len(key), flags, int64(dataLen)) {
		if op == OpSet {
			cmd.failDropping(rTooLarge, noreply, key)
		} else {
			cmd.fail(rTooLarge, noreply)
		}
		p.swallow = int64(dataLen)
		return consumed, nil
	}
	end := consumed + dataLen
	if len(buf) < end {
		return 0, nil
	}
	data := buf[consumed:end]
	if data[dataLen-2] != '\r' || data[dataLen-1] != '\n' {
		// memcached consumed the block; what follows it is a new command.
		cmd.fail(rBadChunk, noreply)
		return end, nil
	}
	cmd.reserve(len(key) + int(vlen))
	cmd.Op = op
	cmd.NoReply = noreply
	r := cmd.addReq()
	r.Kind = tiers.KindSet
	r.Text = true
	r.Mode = textModes[op]
	r.Key = cmd.own(key)
	r.Value = cmd.own(data[:vlen])
	r.ClientFlags = flags
	r.TTL = int64(exptime)
	r.HasTTL = true
	if op == OpCas {
		r.CompareCAS = cas
		r.HasCompareCAS = true
	}
	return end, nil
}

var textModes = [...]tiers.Mode{
	OpSet: tiers.ModeSet, OpAdd: tiers.ModeAdd, OpReplace: tiers.ModeReplace,
	OpAppend: tiers.ModeAppend, OpPrepend: tiers.ModePrepend, OpCas: tiers.ModeSet,
}

func (p *Parser) arith(line []byte, cmd *Command, op Opcode) {
	t := &p.ws.tok
	noreply := p.noreply(line)
	key := t.tok(line, 1)
	if len(key) > KeyMaxLen {
		cmd.fail(rBadFormat, noreply)
		return
	}
	delta, ok := parseUint64(t.tok(line, 2))
	if !ok {
		cmd.fail(rBadDelta, noreply)
		return
	}
	cmd.reserve(len(key))
	cmd.Op = op
	cmd.NoReply = noreply
	r := cmd.addReq()
	r.Kind = tiers.KindArith
	r.Text = true
	r.Mode = tiers.ModeIncr
	if op == OpDecr {
		r.Mode = tiers.ModeDecr
	}
	r.Key = cmd.own(key)
	r.Delta = delta
}

// delete accepts "delete <key> [0] [noreply]": memcached still tolerates
// the zero hold time of old clients and refuses any other.
func (p *Parser) delete(line []byte, cmd *Command) {
	t := &p.ws.tok
	nt := t.ntokens()
	noreply := false
	if nt > 3 {
		zero := eq(t.tok(line, 2), "0")
		noreply = p.noreply(line)
		if !(nt == 4 && (zero || noreply)) && !(nt == 5 && zero && noreply) {
			cmd.fail(rDeleteUsage, noreply)
			return
		}
	}
	key := t.tok(line, 1)
	if len(key) > KeyMaxLen {
		cmd.fail(rBadFormat, noreply)
		return
	}
	cmd.reserve(len(key))
	cmd.Op = OpDelete
	cmd.NoReply = noreply
	r := cmd.addReq()
	r.Kind = tiers.KindDelete
	r.Text = true
	r.Key = cmd.own(key)
}

func (p *Parser) touch(line []byte, cmd *Command) {
	t := &p.ws.tok
	noreply := p.noreply(line)
	key := t.tok(line, 1)
	if len(key) > KeyMaxLen {
		cmd.fail(rBadFormat, noreply)
		return
	}
	exptime, ok := parseInt32(t.tok(line, 2))
	if !ok {
		cmd.fail(rBadExptime, noreply)
		return
	}
	cmd.reserve(len(key))
	cmd.Op = OpTouch
	cmd.NoReply = noreply
	r := cmd.addReq()
	r.Kind = tiers.KindGet
	r.Text = true
	r.Key = cmd.own(key)
	r.TTL = int64(exptime)
	r.HasTTL = true
}

// flushAll: "flush_all [delay] [noreply]". As in memcached, a delay is
// parsed whenever the token count is not exactly that of the bare or
// noreply form, so "flush_all 10 junk" flushes in 10 seconds.
func (p *Parser) flushAll(line []byte, cmd *Command) {
	t := &p.ws.tok
	nt := t.ntokens()
	noreply := p.noreply(line)
	if p.lim.DisableFlush {
		cmd.fail(rFlushDisabled, noreply)
		return
	}
	var delay int32
	hasDelay := false
	if (noreply && nt != 3) || (!noreply && nt != 2) {
		var ok bool
		if delay, ok = parseInt32(t.tok(line, 1)); !ok {
			cmd.fail(rBadExptime, noreply)
			return
		}
		hasDelay = true
	}
	cmd.Op = OpFlushAll
	cmd.NoReply = noreply
	r := cmd.addReq()
	r.Kind = tiers.KindFlush
	r.Text = true
	r.TTL = int64(delay)
	r.HasTTL = hasDelay
}

func (p *Parser) verbosity(line []byte, cmd *Command) {
	t := &p.ws.tok
	noreply := p.noreply(line)
	level := t.tok(line, 1)
	if _, ok := parseUint32(level); !ok {
		cmd.fail(rBadFormat, noreply)
		return
	}
	cmd.reserve(len(level))
	cmd.Op = OpVerbosity
	cmd.NoReply = noreply
	cmd.Args = append(cmd.Args, cmd.own(level))
}

// args fills cmd.Args with every token after the command (stats).
func (p *Parser) args(line []byte, cmd *Command, op Opcode) {
	t := &p.ws.tok
	cmd.reserve(len(line))
	cmd.Op = op
	for i := 1; i < t.n; i++ {
		cmd.Args = append(cmd.Args, cmd.own(t.tok(line, i)))
	}
}
