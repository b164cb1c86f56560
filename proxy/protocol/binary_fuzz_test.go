package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// binFuzzSeeds cover every opcode, quiet and loud, and each length check.
var binFuzzSeeds = [][]byte{
	// retrieval, loud and quiet, with and without the key
	breq(binGet, "k", "", "", 1, 0), breq(binGetQ, "k", "", "", 2, 0), breq(binGetK, "k", "", "", 3, 0),
	breq(binGetKQ, "k", "", "", 4, 0),
	// storage in every mode, with a CAS, too large for the fuzz limit
	breq(binSet, "k", setExt(1, 2), "abc", 1, 0), breq(binSetQ, "k", setExt(0, 0), "", 1, 0),
	breq(binAdd, "k", setExt(0, 0), "v", 1, 7), breq(binAddQ, "k", setExt(0, 0), "v", 1, 0),
	breq(binReplace, "k", setExt(0, 0), "v", 1, 0), breq(binReplaceQ, "k", setExt(0, 0), "v", 1, 0),
	breq(binAppend, "k", "", "v", 1, 0), breq(binAppendQ, "k", "", "v", 1, 3), breq(binPrepend, "k", "", "v", 1, 0),
	breq(binPrependQ, "k", "", "v", 1, 0), breq(binSet, "k", setExt(0, 0), strings.Repeat("v", 5000), 1, 0),
	// deletion, arithmetic with and without creation, touch and gat
	breq(binDelete, "k", "", "", 1, 0), breq(binDeleteQ, "k", "", "", 1, 9), breq(binIncr, "k", arithExt(1, 2, 0), "", 1, 0),
	breq(binDecrQ, "k", arithExt(1, 2, 0xffffffff), "", 1, 0), breq(binIncrQ, "k", arithExt(1, 2, 3), "", 1, 4),
	breq(binDecr, "k", arithExt(5, 0, 0), "", 1, 0), breq(binTouch, "k", u32(10), "", 1, 0),
	breq(binGat, "k", u32(10), "", 1, 0), breq(binGatQ, "k", u32(10), "", 1, 0), breq(binGatK, "k", u32(10), "", 1, 0),
	breq(binGatKQ, "k", u32(10), "", 1, 0),
	// server commands
	breq(binFlush, "", "", "", 1, 0), breq(binFlushQ, "", u32(5), "", 1, 0), breq(binNoop, "", "", "", 1, 0),
	breq(binVersion, "", "", "", 1, 0), breq(binStat, "", "", "", 1, 0), breq(binStat, "settings", "", "", 1, 0),
	breq(binQuit, "", "", "", 1, 0), breq(binQuitQ, "", "", "", 1, 0), breq(0x1b, "", u32(1), "", 1, 0),
	breq(binSASLList, "", "", "", 1, 0), breq(binSASLAuth, "PLAIN", "", "\x00u\x00p", 1, 0), breq(binSASLStep, "PLAIN", "", "x", 1, 0),
	// length checks: extras where none belong, a key over 250, a key
	// longer than the body, a body that runs on, an unknown opcode
	breq(binGet, "k", u32(1), "", 1, 0), breq(binGet, strings.Repeat("k", 251), "", "", 1, 0),
	[]byte("\x80\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x02" + strings.Repeat("\x00", 12) + "kkkkk"),
	breq(binTouch, "k", u32(1), "trailing", 1, 0), breq(0x42, "k", "e", "vv", 1, 0),
	// a bad magic byte after a request, and a pipeline
	cat(breq(binNoop, "", "", "", 1, 0), []byte("get k\r\n"+strings.Repeat(" ", 20))),
	cat(breq(binSetQ, "a", setExt(0, 0), "1", 1, 0), breq(binGetKQ, "a", "", "", 2, 0), breq(binNoop, "", "", "", 3, 0)),
}

func FuzzBinary(f *testing.F) {
	for _, s := range binFuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		if len(buf) == 0 || buf[0] != binReqMagic {
			buf = append([]byte{binReqMagic}, buf...)
		}
		p := NewParser(Limits{MaxItemSize: 4096})
		var cmd Command
		n, err := p.Parse(buf, &cmd)
		if n < 0 || n > len(buf) {
			t.Fatalf("n = %d of %d", n, len(buf))
		}
		if err != nil && !errors.Is(err, ErrClose) {
			t.Fatalf("error %v is not ErrClose", err)
		}
		if n > 0 {
			checkPrefixes(t, buf, n, &cmd)
		}
		drain(t, p, buf[n:], err != nil)
		binRoundTrip(t, buf)
	})
}

// checkBinFrames checks that out is whole response frames echoing cmd's
// opcode and opaque.
func checkBinFrames(t *testing.T, out []byte, cmd *Command) {
	for off := 0; off < len(out); {
		if len(out)-off < binHeaderLen || out[off] != binResMagic {
			t.Fatalf("response malformed at %d: %x", off, out)
		}
		if out[off+1] != cmd.bin.opcode || !bytes.Equal(out[off+12:off+16], cmd.bin.opaque[:]) {
			t.Fatalf("response %x does not echo opcode %x and opaque %x", out, cmd.bin.opcode, cmd.bin.opaque)
		}
		off += binHeaderLen + int(binary.BigEndian.Uint32(out[off+8:]))
		if off > len(out) {
			t.Fatalf("response body runs past the reply: %x", out)
		}
	}
}

// binRoundTrip spells a request derived from the fuzz bytes as a binary
// frame, parses it back and expects the Request its text twin makes.
func binRoundTrip(t *testing.T, data []byte) {
	if len(data) < 12 {
		return
	}
	sel, num, body := data[1], binary.LittleEndian.Uint64(data[2:10]), data[10:]
	key, value := body[:len(body)/2], body[len(body)/2:]
	if len(key) == 0 || len(key) > KeyMaxLen {
		key = []byte("k")
	}
	want := tiers.Request{Key: key, Text: true}
	var in []byte
	switch sel % 5 {
	case 0:
		want.Kind, want.WantValue, want.WantFlags, want.WantCAS = tiers.KindGet, true, true, true
		in = breq(binGetK, string(key), "", "", uint32(num), 0)
	case 1:
		want.Kind, want.WantFlags, want.WantCAS, want.HasTTL, want.TTL = tiers.KindGet, true, true, true, int64(uint32(num))
		in = breq(binTouch, string(key), u32(uint32(num)), "", 1, 0)
	case 2:
		modes := []tiers.Mode{tiers.ModeSet, tiers.ModeAdd, tiers.ModeReplace}
		m := int(sel>>3) % 3
		want.Kind, want.Mode, want.Value, want.ClientFlags, want.TTL, want.HasTTL, want.WantCAS = tiers.KindSet, modes[m], value, uint32(num), int64(uint32(num>>32)), true, true
		cas := num >> 7
		if cas != 0 {
			want.Mode, want.CompareCAS, want.HasCompareCAS = tiers.ModeSet, cas, true
		}
		in = breq([]uint8{binSet, binAdd, binReplace}[m], string(key), setExt(uint32(num), uint32(num>>32)), string(value), 1, cas)
	case 3:
		want.Kind, want.Mode, want.Delta, want.WantCAS = tiers.KindArith, tiers.ModeIncr, num, true
		exp := uint32(num >> 40)
		if sel&32 != 0 {
			exp = 0xffffffff
		} else {
			want.Vivify, want.Initial, want.VivifyTTL = true, num>>3, int64(exp)
		}
		in = breq(binIncr, string(key), arithExt(num, num>>3, exp), "", 1, 0)
	default:
		want.Kind = tiers.KindDelete
		in = breq(binDelete, string(key), "", "", 1, 0)
	}
	p := NewParser(Limits{MaxItemSize: 1 << 20})
	var cmd Command
	p.started, p.binary = true, true
	n, err := p.Parse(in, &cmd)
	if err != nil || n != len(in) || len(cmd.Reqs) != 1 {
		t.Fatalf("round trip %x: n=%d err=%v op=%v reply=%x", in, n, err, cmd.Op, cmd.Reply)
	}
	if !reqEqual(cmd.Reqs[0], want) {
		t.Fatalf("round trip %x:\n got %+v\nwant %+v", in, cmd.Reqs[0], want)
	}
}
