package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// The binary differential test: the same request bytes go to memcached on a
// fresh binary connection and through the parser answered by the embedded
// store, and the responses must match byte for byte once CAS values are
// renumbered (see renumberCAS). Stats are left out: their values differ by
// nature, and TestBinaryStats checks their framing.

// breq spells one binary request.
func breq(opcode uint8, key, ext, value string, opaque uint32, cas uint64) []byte {
	h := make([]byte, binHeaderLen, binHeaderLen+len(ext)+len(key)+len(value))
	h[0] = binReqMagic
	h[1] = opcode
	binary.BigEndian.PutUint16(h[2:], uint16(len(key)))
	h[4] = byte(len(ext))
	binary.BigEndian.PutUint32(h[8:], uint32(len(ext)+len(key)+len(value)))
	binary.BigEndian.PutUint32(h[12:], opaque)
	binary.BigEndian.PutUint64(h[16:], cas)
	return append(append(append(h, ext...), key...), value...)
}

// setExt is the extras of set/add/replace: flags and expiration.
func setExt(flags, exp uint32) string {
	b := binary.BigEndian.AppendUint32(nil, flags)
	return string(binary.BigEndian.AppendUint32(b, exp))
}

// arithExt is the extras of incr/decr: delta, initial value, expiration.
func arithExt(delta, initial uint64, exp uint32) string {
	b := binary.BigEndian.AppendUint64(nil, delta)
	b = binary.BigEndian.AppendUint64(b, initial)
	return string(binary.BigEndian.AppendUint32(b, exp))
}

func u32(v uint32) string { return string(binary.BigEndian.AppendUint32(nil, v)) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// binCase builds its input from the last CAS unique the server handed out
// before it, so a case can spell a CAS that matches.
type binCase struct {
	name string
	in   func(base uint64) []byte
}

func fixed(b []byte) func(uint64) []byte { return func(uint64) []byte { return b } }

var binCases = []binCase{
	{"set get getk", fixed(cat(breq(binSet, "k", setExt(7, 0), "abc", 1, 0), breq(binGet, "k", "", "", 2, 0),
		breq(binGetK, "k", "", "", 3, 0), breq(binGet, "nx", "", "", 4, 0), breq(binGetK, "nx", "", "", 5, 0)))},
	{"quiet gets", fixed(cat(breq(binSet, "a", setExt(1, 0), "1", 1, 0), breq(binGetQ, "a", "", "", 2, 0),
		breq(binGetQ, "nx", "", "", 3, 0), breq(binGetKQ, "a", "", "", 4, 0), breq(binGetKQ, "nx", "", "", 5, 0),
		breq(binNoop, "", "", "", 6, 0)))},
	{"quiet stores", fixed(cat(breq(binSetQ, "a", setExt(0, 0), "x", 1, 0), breq(binAddQ, "a", setExt(0, 0), "y", 2, 0),
		breq(binReplaceQ, "nx", setExt(0, 0), "y", 3, 0), breq(binAppendQ, "a", "", "z", 4, 0),
		breq(binPrependQ, "nx", "", "z", 5, 0), breq(binDeleteQ, "nx", "", "", 6, 0), breq(binGet, "a", "", "", 7, 0),
		breq(binDeleteQ, "a", "", "", 8, 0), breq(binNoop, "", "", "", 9, 0)))},
	{"modes", fixed(cat(breq(binAdd, "k", setExt(0, 0), "a", 1, 0), breq(binAdd, "k", setExt(0, 0), "b", 2, 0),
		breq(binReplace, "k", setExt(3, 0), "c", 3, 0), breq(binReplace, "nx", setExt(0, 0), "d", 4, 0),
		breq(binAppend, "k", "", "e", 5, 0), breq(binPrepend, "k", "", "f", 6, 0), breq(binAppend, "nx", "", "g", 7, 0),
		breq(binGet, "k", "", "", 8, 0)))},
	{"cas", func(base uint64) []byte {
		return cat(breq(binSet, "k", setExt(0, 0), "a", 1, 0), breq(binSet, "k", setExt(0, 0), "b", 2, 99999),
			breq(binSet, "nx", setExt(0, 0), "b", 3, 5), breq(binSet, "k", setExt(0, 0), "c", 4, base+1),
			breq(binAdd, "k", setExt(0, 0), "d", 5, base+2), breq(binReplace, "k", setExt(0, 0), "e", 6, 1),
			breq(binAppend, "k", "", "f", 7, 1), breq(binAppend, "k", "", "g", 8, base+3), breq(binGet, "k", "", "", 9, 0))
	}},
	{"delete", func(base uint64) []byte {
		return cat(breq(binSet, "k", setExt(0, 0), "a", 1, 0), breq(binDelete, "k", "", "", 2, 1),
			breq(binDelete, "k", "", "", 3, base+1), breq(binDelete, "k", "", "", 4, 0), breq(binSet, "j", setExt(0, 0), "a", 5, 0),
			breq(binDelete, "j", "", "", 6, 0))
	}},
	{"incr decr", fixed(cat(breq(binSet, "n", setExt(0, 0), "10", 1, 0), breq(binIncr, "n", arithExt(5, 0, 0), "", 2, 0),
		breq(binDecr, "n", arithExt(100, 0, 0), "", 3, 0), breq(binIncr, "nx", arithExt(1, 42, 0xffffffff), "", 4, 0),
		breq(binIncr, "nx", arithExt(1, 42, 0), "", 5, 0), breq(binIncr, "nx", arithExt(1, 42, 0), "", 6, 0),
		breq(binGet, "nx", "", "", 7, 0), breq(binSet, "s", setExt(0, 0), "x", 8, 0),
		breq(binIncr, "s", arithExt(1, 0, 0), "", 9, 0), breq(binIncrQ, "n", arithExt(1, 0, 0), "", 10, 0),
		breq(binDecrQ, "gone", arithExt(1, 0, 0xffffffff), "", 11, 0), breq(binIncr, "n", arithExt(1, 0, 0), "", 12, 1),
		breq(binIncr, "n", arithExt(18446744073709551615, 0, 0), "", 13, 0)))},
	{"touch gat", fixed(cat(breq(binSet, "k", setExt(9, 0), "val", 1, 0), breq(binTouch, "k", u32(100), "", 2, 0),
		breq(binTouch, "nx", u32(100), "", 3, 0), breq(binGat, "k", u32(0), "", 4, 0), breq(binGatK, "k", u32(0), "", 5, 0),
		breq(binGatQ, "k", u32(0), "", 6, 0), breq(binGatQ, "nx", u32(0), "", 7, 0), breq(binGatKQ, "nx", u32(0), "", 8, 0),
		breq(binGatK, "nx", u32(0), "", 9, 0), breq(binNoop, "", "", "", 10, 0)))},
	{"flush", fixed(cat(breq(binSet, "k", setExt(0, 0), "a", 1, 0), breq(binFlush, "", "", "", 2, 0),
		breq(binGet, "k", "", "", 3, 0), breq(binFlushQ, "", "", "", 4, 0), breq(binFlush, "", u32(0), "", 5, 0),
		breq(binNoop, "", "", "", 6, 0)))},
	{"version noop", fixed(cat(breq(binVersion, "", "", "", 1, 0), breq(binNoop, "", "", "", 0xdeadbeef, 0)))},
	{"quit", fixed(cat(breq(binSet, "k", setExt(0, 0), "a", 1, 0), breq(binQuit, "", "", "", 2, 0), breq(binGet, "k", "", "", 3, 0)))},
	{"quitq", fixed(cat(breq(binNoop, "", "", "", 1, 0), breq(binQuitQ, "", "", "", 2, 0)))},
	{"unknown opcodes", fixed(cat(breq(0x1b, "", u32(1), "", 1, 0), breq(binNoop, "", "", "", 2, 0), breq(binNoop, "", "", "", 3, 0),
		breq(0x30, "k", "", "vv", 4, 0), breq(binNoop, "", "", "", 5, 0)))},
	{"sasl without auth", fixed(cat(breq(binSASLList, "", "", "", 1, 0), breq(binSASLAuth, "PLAIN", "", "\x00u\x00p", 2, 0),
		breq(binNoop, "", "", "", 3, 0)))},
	{"too large", fixed(cat(breq(binSet, "k", setExt(0, 0), "a", 1, 0),
		breq(binSet, "k", setExt(0, 0), strings.Repeat("v", 1<<20), 2, 0), breq(binGet, "k", "", "", 3, 0),
		breq(binAddQ, "k", setExt(0, 0), strings.Repeat("v", 1<<20), 4, 0), breq(binAppend, "k", "", strings.Repeat("v", 1<<20), 5, 0),
		breq(binSet, "k", setExt(0, 0), strings.Repeat("v", 1048516-1), 6, 0), breq(binNoop, "", "", "", 7, 0)))},
	{"binary keys", fixed(cat(breq(binSet, "a b\r\n\x00", setExt(0, 0), "x", 1, 0), breq(binGetK, "a b\r\n\x00", "", "", 2, 0),
		breq(binSet, strings.Repeat("k", 250), setExt(0, 0), "y", 3, 0), breq(binGetK, strings.Repeat("k", 250), "", "", 4, 0)))},
	{"stat unknown", fixed(cat(breq(binStat, "nosuch", "", "", 1, 0), breq(binNoop, "", "", "", 2, 0)))},
	{"get with extras", fixed(cat(breq(binNoop, "", "", "", 1, 0), breq(binGet, "k", u32(1), "", 2, 0), breq(binNoop, "", "", "", 3, 0)))},
	{"set without extras", fixed(cat(breq(binSet, "k", "", "v", 1, 0), breq(binNoop, "", "", "", 2, 0)))},
	{"key 251", fixed(cat(breq(binGet, strings.Repeat("k", 251), "", "", 1, 0), breq(binNoop, "", "", "", 2, 0)))},
	{"version with body", fixed(breq(binVersion, "", "", "x", 1, 0))},
	{"delete with value", fixed(breq(binDelete, "k", "", "x", 1, 0))},
	{"key longer than body", fixed(func() []byte {
		b := breq(binGet, "kkkk", "", "", 1, 0)
		binary.BigEndian.PutUint32(b[8:], 2)
		return b
	}())},
	{"bad magic", fixed(cat(breq(binNoop, "", "", "", 1, 0), []byte("\x81"+strings.Repeat("\x00", 23))))},
	{"bad magic text", fixed(cat(breq(binNoop, "", "", "", 1, 0), []byte("get k\r\n"+strings.Repeat(" ", 24))))},
	{"pipeline", fixed(cat(breq(binSetQ, "a", setExt(1, 0), "A", 1, 0), breq(binSetQ, "b", setExt(2, 0), "BB", 2, 0),
		breq(binGetKQ, "a", "", "", 3, 0), breq(binGetKQ, "x", "", "", 4, 0), breq(binGetKQ, "b", "", "", 5, 0),
		breq(binGetK, "c", "", "", 6, 0), breq(binIncr, "ctr", arithExt(3, 7, 0), "", 7, 0),
		breq(binDelete, "a", "", "", 8, 0), breq(binNoop, "", "", "", 9, 0)))},
}

func TestBinaryDifferentialMemcached(t *testing.T) {
	needMemcached(t)
	for _, tc := range binCases {
		t.Run(tc.name, func(t *testing.T) {
			mcCAS := mcReset(t)
			want, wantClosed := mcBinExchange(t, tc.in(mcCAS))
			now := caseClock()
			for _, byteWise := range []bool{false, true} {
				store, cas := newTestStore(t, now)
				if cas > mcCAS {
					t.Fatalf("store's CAS counter (%d) is ahead of memcached's (%d)", cas, mcCAS)
				}
				out, closed, rest := runBinParser(t, tc.in(cas), byteWise, store)
				got := renumberBinCAS(t, out, mcCAS-cas)
				if !closed && len(rest) != 0 {
					t.Errorf("left %d bytes unparsed: %x", len(rest), trunc(rest))
				}
				if !bytes.Equal(got, want) || closed != wantClosed {
					t.Fatalf("byteWise=%v\n got %x closed=%v\nwant %x closed=%v", byteWise, trunc(got), closed, trunc(want), wantClosed)
				}
			}
		})
	}
}

// runBinParser feeds data to a Parser whole or a byte at a time, answering
// every Command from store, and returns the responses, whether the parser
// closed, and what it left unconsumed.
func runBinParser(t testing.TB, data []byte, byteWise bool, store *testStore) (out []byte, closed bool, rest []byte) {
	t.Helper()
	p := NewParser(Limits{})
	var cmd Command
	var pending []byte
	// flushed is how much of out memcached has written for sure: a noop
	// makes it write its pending responses. A bad magic byte closes at
	// once, dropping the others; every other close writes them first.
	flushed := 0
	feed := func(b []byte) bool {
		pending = append(pending, b...)
		for {
			n, err := p.Parse(pending, &cmd)
			if n > len(pending) {
				t.Fatalf("Parse consumed %d of %d bytes", n, len(pending))
			}
			if err != nil {
				if !errors.Is(err, ErrClose) {
					t.Fatalf("Parse error %v is not ErrClose", err)
				}
				if errors.Is(err, errBadMagic) {
					out = out[:flushed]
				}
				out = cmd.AppendReply(out, nil)
				return true
			}
			if n == 0 {
				return false
			}
			pending = pending[n:]
			if cmd.Op == OpStats {
				out = cmd.AppendBinaryStats(out, []byte("ERROR\r\n"))
				continue
			}
			out = cmd.AppendReply(out, store.do(cmd.Reqs))
			if cmd.bin.opcode == binNoop {
				flushed = len(out)
			}
		}
	}
	if !byteWise {
		return out, feed(data), pending
	}
	for i := range data {
		if feed(data[i : i+1]) {
			return out, true, pending
		}
	}
	return out, false, pending
}

// mcBinExchange sends data to memcached on a fresh connection, then a noop
// whose opaque marks the end of data's responses.
func mcBinExchange(t testing.TB, data []byte) (reply []byte, closed bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", memcachedAddr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial memcached: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	id := uint32(sentinelSeq.Add(1)) | 0x80000000
	sentinel := breq(binNoop, "", "", "", id, 0)
	want := append([]byte{}, sentinel...)
	want[0] = binResMagic
	go func() {
		c.Write(data)
		c.Write(sentinel)
	}()
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if bytes.HasSuffix(got, want) {
			return got[:len(got)-len(want)], false
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("memcached did not answer %x; got %x", trunc(data), trunc(got))
			}
			if err == io.EOF || isReset(err) {
				return got, true
			}
			t.Fatalf("read memcached: %v", err)
		}
	}
}

// renumberBinCAS raises every non-zero CAS of a response stream by delta.
func renumberBinCAS(t testing.TB, out []byte, delta uint64) []byte {
	t.Helper()
	out = append([]byte{}, out...)
	for off := 0; off < len(out); {
		if len(out)-off < binHeaderLen || out[off] != binResMagic {
			t.Fatalf("response stream malformed at %d: %x", off, trunc(out[off:]))
		}
		if cas := binary.BigEndian.Uint64(out[off+16:]); cas != 0 {
			binary.BigEndian.PutUint64(out[off+16:], cas+delta)
		}
		off += binHeaderLen + int(binary.BigEndian.Uint32(out[off+8:]))
	}
	return out
}
