package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// parseOne parses buf with a fresh Parser.
func parseOne(t testing.TB, buf string) (*Command, int, error) {
	t.Helper()
	var cmd Command
	n, err := NewParser(Limits{}).Parse([]byte(buf), &cmd)
	return &cmd, n, err
}

func reqEqual(a, b tiers.Request) bool {
	if !bytes.Equal(a.Key, b.Key) || !bytes.Equal(a.Value, b.Value) {
		return false
	}
	a.Key, a.Value, b.Key, b.Value = nil, nil, nil, nil
	return reflect.DeepEqual(a, b)
}

func get(key string) tiers.Request {
	return tiers.Request{Kind: tiers.KindGet, Text: true, Key: []byte(key), WantValue: true, WantFlags: true}
}

func TestParseFields(t *testing.T) {
	gets := func(key string) tiers.Request { r := get(key); r.WantCAS = true; return r }
	gat := func(key string, ttl int64, cas bool) tiers.Request {
		r := get(key)
		r.WantCAS, r.HasTTL, r.TTL = cas, true, ttl
		return r
	}
	set := func(mode tiers.Mode, key, val string, flags uint32, ttl int64) tiers.Request {
		return tiers.Request{Kind: tiers.KindSet, Text: true, Mode: mode, Key: []byte(key), Value: []byte(val), ClientFlags: flags, TTL: ttl, HasTTL: true}
	}
	cas := set(tiers.ModeSet, "k", "x", 0, 0)
	cas.CompareCAS, cas.HasCompareCAS = 77, true
	type want struct {
		op      Opcode
		noreply bool
		reqs    []tiers.Request
		args    []string
		flags   string
		opaque  string
		b64     bool
	}
	tests := []struct {
		in string
		want
	}{
		{"get k\r\n", want{op: OpGet, reqs: []tiers.Request{get("k")}}},
		{"bget k\r\n", want{op: OpGet, reqs: []tiers.Request{get("k")}}},
		{"get a  b\tc\r\n", want{op: OpGet, reqs: []tiers.Request{get("a"), get("b\tc")}}},
		{"gets a b\n", want{op: OpGets, reqs: []tiers.Request{gets("a"), gets("b")}}},
		{"gat 10 a b\r\n", want{op: OpGat, reqs: []tiers.Request{gat("a", 10, false), gat("b", 10, false)}}},
		{"gats -1 a\r\n", want{op: OpGats, reqs: []tiers.Request{gat("a", -1, true)}}},
		{"gat 4294967306 a\r\n", want{op: OpGat, reqs: []tiers.Request{gat("a", 10, false)}}},
		{"gat 5\r\n", want{op: OpGat}},
		{"touch k 10 noreply\r\n", want{op: OpTouch, noreply: true, reqs: []tiers.Request{{Text: true, Kind: tiers.KindGet, Key: []byte("k"), TTL: 10, HasTTL: true}}}},
		{"set k 5 100 3\r\nabc\r\n", want{op: OpSet, reqs: []tiers.Request{set(tiers.ModeSet, "k", "abc", 5, 100)}}},
		{"add k 0 0 0 noreply\r\n\r\n", want{op: OpAdd, noreply: true, reqs: []tiers.Request{set(tiers.ModeAdd, "k", "", 0, 0)}}},
		{"replace k 4294967295 -1 1\r\nx\r\n", want{op: OpReplace, reqs: []tiers.Request{set(tiers.ModeReplace, "k", "x", 4294967295, -1)}}},
		{"append k 0 0 1\r\nx\r\n", want{op: OpAppend, reqs: []tiers.Request{set(tiers.ModeAppend, "k", "x", 0, 0)}}},
		{"prepend k 0 0 1\r\nx\r\n", want{op: OpPrepend, reqs: []tiers.Request{set(tiers.ModePrepend, "k", "x", 0, 0)}}},
		{"cas k 0 0 1 77\r\nx\r\n", want{op: OpCas, reqs: []tiers.Request{cas}}},
		{"set k 0 0 4\r\na\r\nb\r\n", want{op: OpSet, reqs: []tiers.Request{set(tiers.ModeSet, "k", "a\r\nb", 0, 0)}}},
		{"delete k\r\n", want{op: OpDelete, reqs: []tiers.Request{{Text: true, Kind: tiers.KindDelete, Key: []byte("k")}}}},
		{"delete k 0 noreply\r\n", want{op: OpDelete, noreply: true, reqs: []tiers.Request{{Text: true, Kind: tiers.KindDelete, Key: []byte("k")}}}},
		{"incr k 5\r\n", want{op: OpIncr, reqs: []tiers.Request{{Text: true, Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("k"), Delta: 5}}}},
		{"decr k 18446744073709551615 noreply\r\n", want{op: OpDecr, noreply: true, reqs: []tiers.Request{{Text: true, Kind: tiers.KindArith, Mode: tiers.ModeDecr, Key: []byte("k"), Delta: 1<<64 - 1}}}},
		{"flush_all\r\n", want{op: OpFlushAll, reqs: []tiers.Request{{Text: true, Kind: tiers.KindFlush}}}},
		{"flush_all 10 noreply\r\n", want{op: OpFlushAll, noreply: true, reqs: []tiers.Request{{Text: true, Kind: tiers.KindFlush, TTL: 10, HasTTL: true}}}},
		{"verbosity 1 noreply\r\n", want{op: OpVerbosity, noreply: true, args: []string{"1"}}},
		{"stats\r\n", want{op: OpStats}},
		{"stats slabs  x\r\n", want{op: OpStats, args: []string{"slabs", "x"}}},
		{"version\r\n", want{op: OpVersion}},
		{"cache_memlimit 64\r\n", want{op: OpAdmin, args: []string{"cache_memlimit", "64"}}},
		{"cache_memlimit 64 noreply\r\n", want{op: OpAdmin, noreply: true, args: []string{"cache_memlimit", "64"}}},
		{"slabs automove 1 extra\r\n", want{op: OpAdmin, args: []string{"slabs", "automove", "1"}}},
		{"lru_crawler disable\r\n", want{op: OpAdmin, args: []string{"lru_crawler", "disable"}}},
		{"lru_crawler crawl 1,2\r\n", want{op: OpAdmin, args: []string{"lru_crawler", "crawl", "1,2"}}},
		{"lru_crawler metadump all\r\n", want{op: OpAdmin, args: []string{"lru_crawler", "metadump", "all"}}},
		{"refresh_certs\r\n", want{op: OpAdmin, args: []string{"refresh_certs"}}},
		{"refresh_certs x noreply\r\n", want{op: OpAdmin, noreply: true, args: []string{"refresh_certs"}}},
		{"me k\r\n", want{op: OpMetaDebug, args: []string{"k", "k"}}},
		{"me Zm9v b\r\n", want{op: OpMetaDebug, args: []string{"Zm9v", "foo"}}},
		{"mn\r\n", want{op: OpMetaNoop}},
		{"mg k v f c t s l h k O123 q u T30 N10 R5\r\n", want{op: OpMetaGet, noreply: true, flags: "vfctslhkOquTNR", opaque: "O123",
			reqs: []tiers.Request{{Kind: tiers.KindGet, Key: []byte("k"), WantValue: true, WantFlags: true, WantCAS: true, WantTTL: true,
				WantSize: true, WantLastAccess: true, WantHit: true, NoBump: true, TTL: 30, HasTTL: true, Vivify: true, VivifyTTL: 10,
				Recache: true, RecacheTTL: 5}}}},
		{"mg k\r\n", want{op: OpMetaGet, reqs: []tiers.Request{{Kind: tiers.KindGet, Key: []byte("k")}}}},
		{"mg Zm9v b k\r\n", want{op: OpMetaGet, flags: "bk", b64: true, reqs: []tiers.Request{{Kind: tiers.KindGet, Key: []byte("foo"), KeyBinary: true}}}},
		{"ms k 2 T10 F5 C9 I MA q c k O1\r\nhi\r\n", want{op: OpMetaSet, noreply: true, flags: "TFCIMqckO", opaque: "O1",
			reqs: []tiers.Request{{Kind: tiers.KindSet, Mode: tiers.ModeAppend, Key: []byte("k"), Value: []byte("hi"), TTL: 10, HasTTL: true,
				ClientFlags: 5, CompareCAS: 9, HasCompareCAS: true, Invalidate: true, WantCAS: true}}}},
		{"ms k 0 ME\r\n\r\n", want{op: OpMetaSet, flags: "M", reqs: []tiers.Request{{Kind: tiers.KindSet, Mode: tiers.ModeAdd, Key: []byte("k"), Value: []byte{}}}}},
		{"ms k 1 MR\r\nx\r\n", want{op: OpMetaSet, flags: "M", reqs: []tiers.Request{{Kind: tiers.KindSet, Mode: tiers.ModeReplace, Key: []byte("k"), Value: []byte("x")}}}},
		{"ms k 1 MP\r\nx\r\n", want{op: OpMetaSet, flags: "M", reqs: []tiers.Request{{Kind: tiers.KindSet, Mode: tiers.ModePrepend, Key: []byte("k"), Value: []byte("x")}}}},
		{"md k C5 I T30 q\r\n", want{op: OpMetaDelete, noreply: true, flags: "CITq",
			reqs: []tiers.Request{{Kind: tiers.KindDelete, Key: []byte("k"), CompareCAS: 5, HasCompareCAS: true, Invalidate: true, TTL: 30, HasTTL: true}}}},
		{"ma k MD D5 J7 N60 T10 C3 v c t\r\n", want{op: OpMetaArith, flags: "MDJNTCvct",
			reqs: []tiers.Request{{Kind: tiers.KindArith, Mode: tiers.ModeDecr, Key: []byte("k"), Delta: 5, Initial: 7, Vivify: true, VivifyTTL: 60,
				TTL: 10, HasTTL: true, CompareCAS: 3, HasCompareCAS: true, WantValue: true, WantCAS: true, WantTTL: true}}}},
		{"ma k\r\n", want{op: OpMetaArith, reqs: []tiers.Request{{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("k"), Delta: 1}}}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			cmd, n, err := parseOne(t, tc.in)
			if err != nil || n != len(tc.in) {
				t.Fatalf("Parse = %d, %v; want %d, nil", n, err, len(tc.in))
			}
			if cmd.Op != tc.op || cmd.NoReply != tc.noreply {
				t.Fatalf("op %v noreply %v; want %v %v", cmd.Op, cmd.NoReply, tc.op, tc.noreply)
			}
			if len(cmd.Reqs) != len(tc.reqs) {
				t.Fatalf("%d requests, want %d", len(cmd.Reqs), len(tc.reqs))
			}
			for i := range tc.reqs {
				if !reqEqual(cmd.Reqs[i], tc.reqs[i]) {
					t.Errorf("request %d\n got %+v\nwant %+v", i, cmd.Reqs[i], tc.reqs[i])
				}
			}
			var args []string
			for _, a := range cmd.Args {
				args = append(args, string(a))
			}
			if fmt.Sprint(args) != fmt.Sprint(tc.args) {
				t.Errorf("args %q, want %q", args, tc.args)
			}
			if string(cmd.MetaFlags()) != tc.flags || string(cmd.Opaque()) != tc.opaque || cmd.Base64Key() != tc.b64 {
				t.Errorf("meta flags %q opaque %q b64 %v; want %q %q %v", cmd.MetaFlags(), cmd.Opaque(), cmd.Base64Key(), tc.flags, tc.opaque, tc.b64)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in    string
		n     int // -1: all of in
		op    Opcode
		reply string
		close bool
	}{
		{"foo\r\n", -1, OpError, "ERROR\r\n", false},
		{"set k 0 0 x\r\nab\r\n", 13, OpError, "CLIENT_ERROR bad command line format\r\n", false},
		{"set k 0 0 x noreply\r\nab\r\n", 21, OpNone, "", false},
		{"set k 0 0 1\r\nabc\r\n", 16, OpError, "CLIENT_ERROR bad data chunk\r\n", false},
		{"ms k 1 q\r\nabc\r\n", 13, OpError, "CLIENT_ERROR bad data chunk\r\n", false},
		{"mg k v v\r\n", -1, OpError, "CLIENT_ERROR duplicate flag\r\n", false},
		{"md k v v\r\n", -1, OpError, "CLIENT_ERROR invalid or duplicate flag\r\n", false},
		{"me k\r\n", -1, OpMetaDebug, "EN\r\n", false},
		{"shutdown\r\n", -1, OpError, "ERROR: shutdown not enabled\r\n", false},
		{"GET / HTTP/1.1\r\n", -1, OpNone, "", true},
		{"quit\r\n", -1, OpQuit, "", true},
		{"\x80\x00\x00\x00", 0, OpNone, "", false}, // a binary header still arriving
		{"set k" + strings.Repeat(" ", 2048), 0, OpNone, "", true},
		// A get line past the window streams: its name is consumed first.
		{"get k" + strings.Repeat(" ", DefaultMaxLineLen), 3, OpNone, "", false},
		{"get k" + strings.Repeat(" ", DefaultMaxLineLen) + "\r\n", 3, OpNone, "", false},
	}
	for _, tc := range tests {
		name := tc.in
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			cmd, n, err := parseOne(t, tc.in)
			want := tc.n
			if want < 0 {
				want = len(tc.in)
			}
			if n != want || cmd.Op != tc.op || string(cmd.Reply) != tc.reply || errors.Is(err, ErrClose) != tc.close || cmd.Close != tc.close {
				t.Fatalf("got n=%d op=%v reply=%q err=%v close=%v; want n=%d op=%v reply=%q close=%v",
					n, cmd.Op, cmd.Reply, err, cmd.Close, want, tc.op, tc.reply, tc.close)
			}
			if err != nil && !tc.close {
				t.Fatalf("unexpected error %v", err)
			}
		})
	}
}

// A 10 MB line with no newline is refused after a bounded look, unless it
// is a get or gets line, which memcached lets grow: that one streams, and
// the parser never holds more than a window of it.
func TestParseUnboundedLine(t *testing.T) {
	p := NewParser(Limits{})
	var cmd Command
	big := bytes.Repeat([]byte("k "), 5<<20)
	for _, prefix := range []string{"set ", "mg ", "gat 1 ", strings.Repeat(" ", 101) + "get "} {
		buf := append([]byte(prefix), big...)
		p.Reset(Limits{})
		n, err := p.Parse(buf, &cmd)
		if n != 0 || !errors.Is(err, ErrClose) {
			t.Errorf("%q: Parse = %d, %v; want close", prefix, n, err)
		}
	}
	for _, prefix := range []string{"get ", "   gets "} {
		buf := append([]byte(prefix), big[:2<<20]...) // 1Mi keys: many windows
		p.Reset(Limits{MaxLineLen: 8192})
		keys, off := 0, 0
		for {
			n, err := p.Parse(buf[off:], &cmd)
			if err != nil {
				t.Fatalf("%q: Parse: %v", prefix, err)
			}
			if n == 0 {
				break
			}
			keys += len(cmd.Reqs)
			off += n
		}
		left := buf[off:]
		if keys+bytes.Count(left, []byte("k")) != 1<<20 || len(left) >= 8192 {
			t.Errorf("%q: %d keys handed out and %d bytes left waiting for more; want all 1Mi keys accounted for and less than a window left",
				prefix, keys, len(left))
		}
	}
	// Below the window a get line waits for its newline.
	p.Reset(Limits{MaxLineLen: 8192})
	n, err := p.Parse(append([]byte("get "), big[:8000]...), &cmd)
	if n != 0 || err != nil {
		t.Errorf("short get line: Parse = %d, %v; want wait", n, err)
	}
}

func TestSwallow(t *testing.T) {
	p := NewParser(Limits{MaxItemSize: 4096})
	var cmd Command
	in := []byte("set k 0 0 5000\r\n")
	n, err := p.Parse(in, &cmd)
	if err != nil || n != len(in) || string(cmd.Reply) != "SERVER_ERROR object too large for cache\r\n" {
		t.Fatalf("Parse = %d, %v, %q", n, err, cmd.Reply)
	}
	if p.Swallowing() != 5002 {
		t.Fatalf("swallowing %d, want 5002", p.Swallowing())
	}
	rest := append(bytes.Repeat([]byte("x"), 5002), "get k\r\n"...)
	total := 0
	for _, chunk := range []int{1000, 3000, 5000} {
		n, err := p.Parse(rest[total:min(total+chunk, len(rest))], &cmd)
		if err != nil || cmd.Op != OpNone || n != min(chunk, 5002-total) {
			t.Fatalf("swallow step at %d: %d, %v, op %v", total, n, err, cmd.Op)
		}
		total += n
	}
	if total != 5002 || p.Swallowing() != 0 {
		t.Fatalf("swallowed %d, left %d", total, p.Swallowing())
	}
	n, err = p.Parse(rest[total:], &cmd)
	if err != nil || n != 7 || cmd.Op != OpGet {
		t.Fatalf("after swallow: %d, %v, %v", n, err, cmd.Op)
	}
}

// validRequests are complete requests, each parsed on its own.
var validRequests = []string{
	"get k\r\n", "gets a b c\r\n", "gat 1 a\r\n", "gats 0 a b\n", "touch k 1\r\n", "bget x\r\n",
	"set k 0 0 3\r\nabc\r\n", "set k 1 2 4\r\na\r\nb\r\n", "add k 0 0 1 noreply\r\nx\r\n", "replace k 0 0 1\nx\r\n",
	"append k 0 0 0\r\n\r\n", "prepend k 0 0 1\r\n\n\r\n", "cas k 0 0 1 9\r\nx\r\n", "delete k\r\n", "delete k 0 noreply\r\n",
	"incr k 1\r\n", "decr k 2 noreply\r\n", "flush_all\r\n", "flush_all 5\r\n", "verbosity 1\r\n", "version\r\n", "stats\r\n",
	"stats items\r\n", "mn\r\n", "me k\r\n", "mg k v f k O1 q\r\n", "mg Zm9v b v\r\n", "ms k 2 T0 F1 c k\r\nhi\r\n",
	"ms k 3 MA q\r\na\nb\r\n", "md k q C1\r\n", "ma k D2 MD v N0 J1\r\n", "foo\r\n",
}

func TestPrefixesWait(t *testing.T) {
	for _, req := range validRequests {
		_, nFull, err := parseOne(t, req)
		if err != nil || nFull != len(req) {
			t.Fatalf("%q: full parse %d, %v", req, nFull, err)
		}
		p := NewParser(Limits{})
		var cmd Command
		for k := 0; k < nFull; k++ {
			if n, err := p.Parse([]byte(req[:k]), &cmd); n != 0 || err != nil {
				t.Fatalf("%q: prefix of %d bytes parsed as %d, %v", req, k, n, err)
			}
		}
	}
}

func TestPipelinedBurst(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var burst []byte
	var order []int
	for i := 0; i < 2000; i++ {
		j := rng.IntN(len(validRequests))
		order = append(order, j)
		burst = append(burst, validRequests[j]...)
	}
	for _, chunked := range []bool{false, true} {
		p := NewParser(Limits{})
		var cmd Command
		var pending []byte
		got := 0
		src := burst
		for len(src) > 0 || len(pending) > 0 {
			step := len(src)
			if chunked {
				step = min(len(src), 1+rng.IntN(40))
			}
			pending = append(pending, src[:step]...)
			src = src[step:]
			for {
				n, err := p.Parse(pending, &cmd)
				if err != nil {
					t.Fatalf("request %d: %v", got, err)
				}
				if n == 0 {
					break
				}
				want, wantN, _ := parseOne(t, validRequests[order[got]])
				if n != wantN || cmd.Op != want.Op || len(cmd.Reqs) != len(want.Reqs) || !bytes.Equal(cmd.Reply, want.Reply) {
					t.Fatalf("request %d (%q): n=%d op=%v; want n=%d op=%v", got, validRequests[order[got]], n, cmd.Op, wantN, want.Op)
				}
				for i := range want.Reqs {
					if !reqEqual(cmd.Reqs[i], want.Reqs[i]) {
						t.Fatalf("request %d: %+v, want %+v", got, cmd.Reqs[i], want.Reqs[i])
					}
				}
				pending = pending[n:]
				got++
			}
			if len(src) == 0 && len(pending) > 0 {
				t.Fatalf("left %q", pending)
			}
		}
		if got != len(order) {
			t.Fatalf("parsed %d requests, want %d", got, len(order))
		}
	}
}

// The Command owns its bytes: overwriting the input does not change it.
func TestCommandOwnsBytes(t *testing.T) {
	buf := []byte("ms key 5 O77 k\r\nvalue\r\n")
	p := NewParser(Limits{})
	var cmd Command
	if n, err := p.Parse(buf, &cmd); err != nil || n != len(buf) {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	for i := range buf {
		buf[i] = 'X'
	}
	if string(cmd.Reqs[0].Key) != "key" || string(cmd.Reqs[0].Value) != "value" || string(cmd.Opaque()) != "O77" {
		t.Fatalf("command changed with its input: %q %q %q", cmd.Reqs[0].Key, cmd.Reqs[0].Value, cmd.Opaque())
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := (Limits{}).Validate(); err != nil {
		t.Errorf("zero limits: %v", err)
	}
	if err := (Limits{MaxItemSize: 10}).Validate(); err == nil {
		t.Error("MaxItemSize 10 accepted")
	}
	if err := (Limits{MaxLineLen: 100}).Validate(); err == nil {
		t.Error("MaxLineLen 100 accepted")
	}
	if l := NewParser(Limits{MaxLineLen: 100}).Limits(); l.MaxLineLen != lineNoNewlineMax || l.MaxItemSize != DefaultMaxItemSize {
		t.Errorf("NewParser limits %+v", l)
	}
}

func TestDisableFlush(t *testing.T) {
	p := NewParser(Limits{DisableFlush: true})
	var cmd Command
	for in, want := range map[string]string{
		"flush_all\r\n":           "CLIENT_ERROR flush_all not allowed\r\n",
		"flush_all abc\r\n":       "CLIENT_ERROR flush_all not allowed\r\n",
		"flush_all 0 noreply\r\n": "",
	} {
		if _, err := p.Parse([]byte(in), &cmd); err != nil || string(cmd.AppendReply(nil, nil)) != want {
			t.Errorf("%q: %q, want %q", in, cmd.AppendReply(nil, nil), want)
		}
	}
}
