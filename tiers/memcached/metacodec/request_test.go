package metacodec

import (
	"bytes"
	"encoding/base64"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// decodeRequest is a small meta-command reader for the round-trip tests:
// it parses what AppendRequest wrote back into a Request, the way memcached
// would read it. It returns the bytes consumed.
func decodeRequest(t *testing.T, b []byte) (tiers.Request, int) {
	t.Helper()
	nl := bytes.Index(b, []byte("\r\n"))
	if nl < 0 {
		t.Fatalf("no line end in %q", b)
	}
	toks := strings.Split(string(b[:nl]), " ")
	n := nl + 2
	var r tiers.Request
	if toks[0] == "flush_all" {
		r.Kind = tiers.KindFlush
		if len(toks) > 1 {
			r.TTL, _ = strconv.ParseInt(toks[1], 10, 64)
		}
		return r, n
	}
	if len(toks) < 2 {
		t.Fatalf("short line %q", b[:nl])
	}
	key := toks[1]
	flags := toks[2:]
	switch toks[0] {
	case "mg":
		r.Kind = tiers.KindGet
	case "ms":
		r.Kind = tiers.KindSet
		size, err := strconv.Atoi(flags[0])
		if err != nil {
			t.Fatalf("ms length %q", flags[0])
		}
		flags = flags[1:]
		r.Value = b[n : n+size]
		if string(b[n+size:n+size+2]) != "\r\n" {
			t.Fatalf("ms data block not terminated in %q", b)
		}
		n += size + 2
	case "md":
		r.Kind = tiers.KindDelete
	case "ma":
		r.Kind, r.Mode, r.Delta = tiers.KindArith, tiers.ModeIncr, 1
	default:
		t.Fatalf("unknown command %q", toks[0])
	}
	seen := map[byte]bool{}
	for _, f := range flags {
		if f == "" {
			t.Fatalf("empty flag token in %q", b[:nl])
		}
		if seen[f[0]] {
			t.Fatalf("flag %c twice in %q", f[0], b[:nl])
		}
		seen[f[0]] = true
		arg := f[1:]
		i64 := func() int64 {
			v, err := strconv.ParseInt(arg, 10, 32)
			if err != nil {
				t.Fatalf("flag %q: %v", f, err)
			}
			return v
		}
		u64 := func() uint64 {
			v, err := strconv.ParseUint(arg, 10, 64)
			if err != nil {
				t.Fatalf("flag %q: %v", f, err)
			}
			return v
		}
		switch f[0] {
		case 'b':
			dec, err := base64.StdEncoding.DecodeString(key)
			if err != nil {
				t.Fatalf("base64 key %q: %v", key, err)
			}
			key = string(dec)
		case 'v':
			r.WantValue = true
		case 'f':
			r.WantFlags = true
		case 't':
			r.WantTTL = true
		case 'c':
			r.WantCAS = true
		case 's':
			r.WantSize = true
		case 'h':
			r.WantHit = true
		case 'l':
			r.WantLastAccess = true
		case 'u':
			r.NoBump = true
		case 'I':
			r.Invalidate = true
		case 'T':
			r.TTL = i64()
			if r.Kind != tiers.KindSet {
				r.HasTTL = true
			}
		case 'N':
			r.Vivify, r.VivifyTTL = true, i64()
		case 'R':
			r.Recache, r.RecacheTTL = true, i64()
		case 'C':
			r.HasCompareCAS, r.CompareCAS = true, u64()
		case 'F':
			r.ClientFlags = uint32(u64())
		case 'D':
			r.Delta = u64()
		case 'J':
			r.Initial = u64()
		case 'M':
			modes := map[string]tiers.Mode{"ME": tiers.ModeAdd, "MR": tiers.ModeReplace, "MA": tiers.ModeAppend,
				"MP": tiers.ModePrepend, "MS": tiers.ModeSet, "MD": tiers.ModeDecr, "MI": tiers.ModeIncr}
			m, ok := modes[f]
			if !ok {
				t.Fatalf("mode %q", f)
			}
			r.Mode = m
		default:
			t.Fatalf("unexpected flag %q", f)
		}
	}
	r.Key = []byte(key)
	return r, n
}

func TestRequestRoundTrip(t *testing.T) {
	binKey := []byte("key with spaces\r\n\x00\x7f")
	reqs := []tiers.Request{
		{Kind: tiers.KindGet, Key: []byte("a"), WantValue: true, WantFlags: true},
		{Kind: tiers.KindGet, Key: []byte("gets:1"), WantValue: true, WantFlags: true, WantCAS: true},
		{Kind: tiers.KindGet, Key: []byte("touch"), HasTTL: true, TTL: 300},
		{Kind: tiers.KindGet, Key: []byte("gat"), HasTTL: true, TTL: -1, WantValue: true, WantFlags: true, WantTTL: true},
		{Kind: tiers.KindGet, Key: []byte("meta"), WantSize: true, WantHit: true, WantLastAccess: true, NoBump: true,
			Vivify: true, VivifyTTL: 30, Recache: true, RecacheTTL: 10},
		{Kind: tiers.KindGet, Key: binKey, WantValue: true},
		{Kind: tiers.KindSet, Mode: tiers.ModeSet, Key: []byte("s"), Value: []byte("hello"), ClientFlags: 42, TTL: 60},
		{Kind: tiers.KindSet, Mode: tiers.ModeAdd, Key: []byte("s"), Value: []byte("")},
		{Kind: tiers.KindSet, Mode: tiers.ModeReplace, Key: []byte("s"), Value: []byte("x\r\ny"), TTL: -5},
		{Kind: tiers.KindSet, Mode: tiers.ModeAppend, Key: binKey, Value: []byte("tail"), Vivify: true, VivifyTTL: 9},
		{Kind: tiers.KindSet, Mode: tiers.ModePrepend, Key: []byte("s"), Value: []byte("head")},
		{Kind: tiers.KindSet, Mode: tiers.ModeSet, Key: []byte("cas"), Value: []byte("v"), HasCompareCAS: true,
			CompareCAS: math.MaxUint64, Invalidate: true, WantCAS: true, TTL: 2592001},
		{Kind: tiers.KindDelete, Key: []byte("d")},
		{Kind: tiers.KindDelete, Key: []byte("d"), HasCompareCAS: true, CompareCAS: 7, Invalidate: true, HasTTL: true, TTL: 30},
		{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("n"), Delta: 1, WantValue: true},
		{Kind: tiers.KindArith, Mode: tiers.ModeDecr, Key: []byte("n"), Delta: 1 << 63, WantValue: true, WantTTL: true, WantCAS: true},
		{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: binKey, Delta: 0, Vivify: true, VivifyTTL: 0, Initial: 99,
			HasTTL: true, TTL: 100, HasCompareCAS: true, CompareCAS: 3},
		{Kind: tiers.KindFlush},
		{Kind: tiers.KindFlush, TTL: 10},
	}
	var buf []byte
	for i := range reqs {
		var err error
		if buf, err = AppendRequest(buf, &reqs[i]); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	// Decode the whole pipeline back, in order.
	off := 0
	for i := range reqs {
		got, n := decodeRequest(t, buf[off:])
		off += n
		want := reqs[i]
		if want.Kind == tiers.KindArith {
			want.WantValue = true // ma always asks for the new number
		}
		if len(want.Value) == 0 {
			want.Value, got.Value = nil, nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("request %d:\n sent %+v\n read %+v\n wire %q", i, want, got, buf)
		}
	}
	if off != len(buf) {
		t.Errorf("decoded %d of %d bytes", off, len(buf))
	}
}

func TestRequestGolden(t *testing.T) {
	cases := []struct {
		req  tiers.Request
		wire string
	}{
		{tiers.Request{Kind: tiers.KindGet, Key: []byte("foo"), WantValue: true, WantFlags: true, WantTTL: true}, "mg foo v f t\r\n"},
		{tiers.Request{Kind: tiers.KindGet, Key: []byte("foo"), HasTTL: true, TTL: 5, WantTTL: true}, "mg foo T5 t\r\n"},
		{tiers.Request{Kind: tiers.KindGet, Key: []byte("a b")}, "mg YSBi b\r\n"},
		{tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeAdd, Key: []byte("foo"), Value: []byte("bar"), TTL: 60, ClientFlags: 1}, "ms foo 3 F1 T60 ME\r\nbar\r\n"},
		{tiers.Request{Kind: tiers.KindSet, Key: []byte("a b"), Value: []byte("v")}, "ms YSBi 1 b\r\nv\r\n"},
		{tiers.Request{Kind: tiers.KindDelete, Key: []byte("foo")}, "md foo\r\n"},
		{tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeDecr, Key: []byte("n"), Delta: 2}, "ma n MD D2 v\r\n"},
		{tiers.Request{Kind: tiers.KindFlush, TTL: -3}, "flush_all\r\n"},
	}
	for _, c := range cases {
		got, err := AppendRequest(nil, &c.req)
		if err != nil || string(got) != c.wire {
			t.Errorf("%+v: got %q, %v; want %q", c.req, got, err, c.wire)
		}
	}
}

// TestRequestOpaque: the extra flags end the command line, before a set's
// data block, and a flush takes none.
func TestRequestOpaque(t *testing.T) {
	op := []byte(" Oe17")
	cases := []struct {
		req  tiers.Request
		wire string
	}{
		{tiers.Request{Kind: tiers.KindGet, Key: []byte("foo"), WantValue: true}, "mg foo v Oe17\r\n"},
		{tiers.Request{Kind: tiers.KindSet, Key: []byte("foo"), Value: []byte("bar"), TTL: 60}, "ms foo 3 T60 Oe17\r\nbar\r\n"},
		{tiers.Request{Kind: tiers.KindDelete, Key: []byte("foo")}, "md foo Oe17\r\n"},
		{tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("n"), Delta: 1}, "ma n D1 v Oe17\r\n"},
		{tiers.Request{Kind: tiers.KindFlush}, "flush_all\r\n"},
	}
	for _, c := range cases {
		got, err := AppendRequestOpaque(nil, &c.req, op)
		if err != nil || string(got) != c.wire {
			t.Errorf("%+v: got %q, %v; want %q", c.req, got, err, c.wire)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	long := bytes.Repeat([]byte("k"), KeyMaxLen+1)
	binLong := bytes.Repeat([]byte(" "), 187) // base64 is 252 bytes
	cases := []struct {
		req  tiers.Request
		want error
	}{
		{tiers.Request{Kind: tiers.KindGet}, ErrEmptyKey},
		{tiers.Request{Kind: tiers.KindGet, Key: long}, ErrKeyTooLong},
		{tiers.Request{Kind: tiers.KindGet, Key: binLong}, ErrKeyTooLong},
		{tiers.Request{Kind: tiers.KindSet, Key: []byte("k"), TTL: math.MaxInt32 + 1}, ErrTimeRange},
		{tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), HasTTL: true, TTL: math.MinInt32 - 1}, ErrTimeRange},
		{tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeIncr, Key: []byte("k")}, ErrUnknownKind},
		{tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeAdd, Key: []byte("k")}, ErrUnknownKind},
		{tiers.Request{Kind: 99, Key: []byte("k")}, ErrUnknownKind},
	}
	for _, c := range cases {
		dst := []byte("keep")
		got, err := AppendRequest(dst, &c.req)
		if !errors.Is(err, c.want) {
			t.Errorf("%+v: err %v, want %v", c.req, err, c.want)
		}
		if string(got) != "keep" {
			t.Errorf("%+v: dst changed to %q on error", c.req, got)
		}
	}
	// The longest binary key that fits (248 bytes of base64) still encodes.
	if _, err := AppendRequest(nil, &tiers.Request{Kind: tiers.KindGet, Key: bytes.Repeat([]byte(" "), 186)}); err != nil {
		t.Errorf("186-byte binary key: %v", err)
	}
}

func TestAppendRequestDoesNotAllocate(t *testing.T) {
	req := tiers.Request{Kind: tiers.KindGet, Key: []byte("user:12345"), WantValue: true, WantFlags: true}
	set := tiers.Request{Kind: tiers.KindSet, Key: []byte("user:12345"), Value: make([]byte, 100), TTL: 60}
	bin := tiers.Request{Kind: tiers.KindGet, Key: []byte("with space"), WantValue: true}
	buf := make([]byte, 0, 4096)
	n := testing.AllocsPerRun(200, func() {
		buf, _ = AppendRequest(buf[:0], &req)
		buf, _ = AppendRequest(buf, &set)
		buf, _ = AppendRequest(buf, &bin)
	})
	if n != 0 {
		t.Errorf("AppendRequest allocates %.1f times per call", n)
	}
}
