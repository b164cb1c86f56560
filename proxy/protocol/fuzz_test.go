package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// fuzzSeeds cover every command, flag and error path of the parser.
var fuzzSeeds = []string{
	// retrieval, one and many keys, gat's exptime first, no key after it
	"get k\r\n", "gets a b c\r\n", "gat 10 a b\r\n", "gats -1 a\r\n", "gat 5\r\n", "bget k\r\n",
	// storage, each mode, noreply, cas, empty value, value holding \r\n
	"set k 1 2 3\r\nabc\r\n", "add k 0 0 1 noreply\r\nx\r\n", "replace k 0 0 0\r\n\r\n",
	"append k 0 0 2\r\n\r\n\r\n", "prepend k 0 0 1\r\nx\r\n", "cas k 0 0 1 99\r\nx\r\n",
	// deletion with memcached's tolerated zero, arithmetic, touch
	"delete k\r\n", "delete k 0 noreply\r\n", "delete k 5\r\n", "incr k 1\r\n", "decr k 18446744073709551615 noreply\r\n",
	"touch k 10\r\n", "touch k noreply\r\n",
	// server commands
	"flush_all\r\n", "flush_all 10 noreply\r\n", "flush_all abc\r\n", "version\r\n", "verbosity 1\r\n", "verbosity x\r\n",
	"stats\r\n", "stats items\r\n", "quit\r\n", "shutdown\r\n", "refresh_certs\r\n", "lru_crawler x\r\n",
	// administration: cache_memlimit's size and noreply, slabs automove's
	// level (valid, out of range, not a number) and reassign's class
	// checks, lru_crawler's subcommands with their argument checks and
	// class lists (all, a list, out of range, empty items, junk)
	"cache_memlimit 64\r\n", "cache_memlimit 7 noreply\r\n", "cache_memlimit x\r\n", "cache_memlimit\r\n",
	"cache_memlimit 1 2 3\r\n", "slabs automove 2\r\n", "slabs automove 3\r\n", "slabs automove -1\r\n",
	"slabs automove\r\n", "slabs reassign 1 1\r\n", "slabs reassign -1 64\r\n", "slabs reassign 0 2\r\n",
	"slabs reassign x 2\r\n", "slabs nosuch 1\r\n", "lru_crawler\r\n", "lru_crawler enable\r\n",
	"lru_crawler sleep 1000001\r\n", "lru_crawler sleep\r\n", "lru_crawler tocrawl 4294967296\r\n",
	"lru_crawler crawl all\r\n", "lru_crawler crawl 1,2,63\r\n", "lru_crawler crawl 64\r\n",
	"lru_crawler crawl 1,,2\r\n", "lru_crawler metadump hash\r\n", "lru_crawler metadump\r\n",
	"lru_crawler HTTP/1.1\r\n", "slabs HTTP/1.1\r\n",
	// stats sections the proxy answers, with their arguments
	"stats settings\r\n", "stats cachedump 1 10\r\n", "stats cachedump 1\r\n", "stats detail on\r\n", "stats reset\r\n",
	// meta get with every flag, quiet mode, base64 key, opaque limits
	"mg k v f c t s l h k O123 q u T30 N10 R5\r\n", "mg Zm9v b k v\r\n", "mg Zm9 b\r\n", "mg A=AA b k\r\n",
	"mg k O12345678901234567890123456789012\r\n", "mg k v v\r\n", "mg k \x01\r\n", "mg k \xff\r\n", "mg k T\r\n",
	"mg k MEE\r\n", "mg a s v t c f l h k O1 q u N1 R2 T4 b I M F J D\r\n", "mg\r\n",
	// meta set: modes, flags, errors that swallow and errors that do not
	"ms k 2 T10 F5 C9 I MA q c k O1\r\nhi\r\n", "ms k 1 ME\r\nx\r\n", "ms k 1 MX\r\nx\r\n", "ms k 1 Fx\r\nx\r\n",
	"ms k x\r\nhi\r\n", "ms k\r\n", "ms k 1\r\nabc\r\n", "ms k 2000000 q\r\n", "ms Zm9v 1 b\r\nx\r\n",
	// meta delete and arithmetic
	"md k C5 I T30 q k O1\r\n", "md k x\r\n", "ma k MD D5 J7 N60 T10 C3 v c t\r\n", "ma k MX\r\n", "ma k Dx\r\n",
	// noop and debug
	"mn\r\n", "me k\r\n", "me Zm9v b\r\n", "me\r\n",
	// line framing: bare \n, \r\n alone, NUL, tabs, trailing spaces, many tokens
	"get k\n", "\r\n", "\n", "get a\x00b\r\n", "get a\tb \r\n", "get " + strings.Repeat("k ", 30) + "\r\n",
	"set k 0 0 1" + strings.Repeat(" x", 22) + "\r\n",
	// numbers: sign, overflow, 32-bit truncation, white space after
	"set k 4294967296 0 1\r\nx\r\n", "set k -1 0 1\r\nx\r\n", "set k 0 0 4294967298\r\nab\r\n", "set k +1 0 1\t9\r\nx\r\n",
	"incr k 18446744073709551616\r\n", "incr k -0\r\n",
	// data blocks: bad chunk, too large (swallowed), key limits
	"set k 0 0 1\r\nabc\r\n", "set k 0 0 2000000\r\n", "get " + strings.Repeat("k", 251) + "\r\n",
	// connection closes: HTTP, binary magic, long lines
	"GET / HTTP/1.1\r\n", "\x80\x01\x00\x00", "set k" + strings.Repeat(" ", 2100), "   get " + strings.Repeat("k ", 1100),
	// pipelines
	"get a\r\nset b 0 0 1\r\nx\r\nmg b v\r\nmn\r\n",
	// get lines in pieces: more keys than one piece holds; past the fuzz
	// window of 4096 bytes they stream, with an over-long key late, a NUL
	// ending the keys, nothing but spaces, a token longer than the window
	"get " + strings.Repeat("k ", 100) + "\r\nmn\r\n", "gat 1 " + strings.Repeat("k ", 100) + "\r\n",
	"get " + strings.Repeat("k ", 3000) + "\r\nmn\r\n", "gets " + strings.Repeat("ab ", 2000) + strings.Repeat("z", 251) + "\r\n",
	"get " + strings.Repeat("a ", 2100) + "\x00 b\r\nmn\r\n", "gets" + strings.Repeat(" ", 5000) + "\r\n",
	"get a " + strings.Repeat("y", 5000) + "\r\n",
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(fuzzBody)
}

func fuzzBody(t *testing.T, buf []byte) {
	{
		p := NewParser(Limits{MaxItemSize: 4096, MaxLineLen: 4096})
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
		roundTrip(t, buf)
	}
}

// checkPrefixes: a prefix of buf either waits or is parsed exactly as buf.
func checkPrefixes(t *testing.T, buf []byte, n int, full *Command) {
	fullOp, fullReply, fullReqs := full.Op, string(full.Reply), len(full.Reqs)
	step := max(1, n/64) // bounded work per input
	for k := 0; k < n; k += step {
		var cmd Command
		m, _ := NewParser(Limits{MaxItemSize: 4096, MaxLineLen: 4096}).Parse(buf[:k], &cmd)
		if m > k {
			t.Fatalf("prefix %d: consumed %d", k, m)
		}
		if m != 0 && (m != n || cmd.Op != fullOp || string(cmd.Reply) != fullReply || len(cmd.Reqs) != fullReqs) {
			t.Fatalf("prefix %d parsed as n=%d op=%v, full buffer as n=%d op=%v", k, m, cmd.Op, n, fullOp)
		}
	}
}

// drain parses the rest as a pipeline and spells a reply for each
// command from synthetic results.
func drain(t *testing.T, p *Parser, rest []byte, closed bool) {
	var cmd Command
	var out []byte
	statuses := []tiers.Status{tiers.StatusHit, tiers.StatusMiss, tiers.StatusStored, tiers.StatusNotStored, tiers.StatusExists,
		tiers.StatusNotFound, tiers.StatusNonNumeric, tiers.StatusTooLarge, tiers.StatusNoMemory, tiers.StatusError}
	for i := 0; !closed && len(rest) > 0 && i < 1000; i++ {
		n, err := p.Parse(rest, &cmd)
		if n > len(rest) {
			t.Fatalf("n = %d of %d", n, len(rest))
		}
		closed = err != nil
		if n == 0 && !closed {
			break
		}
		res := make([]tiers.Result, len(cmd.Reqs))
		for j := range res {
			res[j] = tiers.Result{Status: statuses[(i+j)%len(statuses)], Value: []byte("1"), Err: errors.New("e")}
		}
		out = cmd.AppendReply(out[:0], res)
		if cmd.Binary() {
			checkBinFrames(t, out, &cmd)
		} else if len(out) > 0 && !bytes.HasSuffix(out, []byte("\r\n")) {
			t.Fatalf("reply %q does not end a line", out)
		}
		rest = rest[n:]
	}
}

// roundTrip derives a Request from the fuzz bytes, spells it as a command,
// parses it back and expects the same fields.
func roundTrip(t *testing.T, data []byte) {
	if len(data) < 12 {
		return
	}
	sel, num, body := data[0], binary.LittleEndian.Uint64(data[1:9]), data[9:]
	half := len(body) / 2
	key, value := body[:half], body[half:]
	meta := sel&1 == 1
	// A text key is any bytes but the ones that end a token or a line.
	textKey := bytes.Clone(key)
	for i, c := range textKey {
		if c == ' ' || c == '\n' || c == '\r' || c == 0 {
			textKey[i] = 'x'
		}
	}
	if len(textKey) == 0 || len(textKey) > KeyMaxLen {
		textKey = []byte("k")
	}
	flags, ttl := uint32(num), int32(num>>32)
	want := tiers.Request{Key: textKey, Text: true}
	var in []byte
	switch op := (sel >> 1) % 6; {
	case !meta && op == 0:
		want.Kind, want.WantValue, want.WantFlags, want.WantCAS = tiers.KindGet, true, true, sel&64 != 0
		cmd := "get"
		if want.WantCAS {
			cmd = "gets"
		}
		in = fmt.Appendf(nil, "%s %s\r\n", cmd, textKey)
	case !meta && op == 1:
		want.Kind, want.HasTTL, want.TTL, want.WantValue, want.WantFlags = tiers.KindGet, true, int64(ttl), true, true
		in = fmt.Appendf(nil, "gat %d %s\r\n", ttl, textKey)
	case !meta && op == 2:
		want.Kind, want.Mode, want.Value, want.ClientFlags, want.TTL, want.HasTTL = tiers.KindSet, tiers.Mode(sel>>4%5), value, flags, int64(ttl), true
		names := []string{"set", "add", "replace", "append", "prepend"}
		in = fmt.Appendf(nil, "%s %s %d %d %d\r\n%s\r\n", names[want.Mode], textKey, flags, ttl, len(value), value)
	case !meta && op == 3:
		want.Kind, want.Value, want.ClientFlags, want.CompareCAS, want.HasCompareCAS, want.HasTTL = tiers.KindSet, value, flags, num, true, true
		in = fmt.Appendf(nil, "cas %s %d 0 %d %d noreply\r\n%s\r\n", textKey, flags, len(value), num, value)
	case !meta && op == 4:
		want.Kind, want.Mode, want.Delta = tiers.KindArith, tiers.ModeIncr+tiers.Mode(sel>>4%2), num
		in = fmt.Appendf(nil, "%s %s %d\r\n", []string{"incr", "decr"}[sel>>4%2], textKey, num)
	case !meta && op == 5:
		want.Kind = tiers.KindDelete
		in = fmt.Appendf(nil, "delete %s\r\n", textKey)
	default:
		in, want = metaRoundTrip(sel, num, key, value)
	}
	var cmd Command
	n, err := NewParser(Limits{MaxItemSize: 1 << 20}).Parse(in, &cmd)
	if err != nil || n != len(in) || len(cmd.Reqs) != 1 {
		t.Fatalf("round trip %q: n=%d err=%v op=%v reply=%q", in, n, err, cmd.Op, cmd.Reply)
	}
	if !reqEqual(cmd.Reqs[0], want) {
		t.Fatalf("round trip %q:\n got %+v\nwant %+v", in, cmd.Reqs[0], want)
	}
}

func metaRoundTrip(sel byte, num uint64, key, value []byte) ([]byte, tiers.Request) {
	// Any key travels base64 encoded; 186 bytes encode to 248.
	if len(key) == 0 {
		key = []byte{0}
	}
	if len(key) > 186 {
		key = key[:186]
	}
	enc := base64.StdEncoding.EncodeToString(key)
	want := tiers.Request{Key: key, KeyBinary: true}
	ttl := int32(num >> 32)
	var b bytes.Buffer
	switch (sel >> 1) % 4 {
	case 0:
		want.Kind, want.WantValue, want.WantCAS, want.WantFlags, want.HasTTL, want.TTL = tiers.KindGet, true, true, true, true, int64(ttl)
		fmt.Fprintf(&b, "mg %s b v c f T%d k O1", enc, ttl)
		if sel&32 != 0 {
			want.Vivify, want.VivifyTTL = true, int64(ttl)
			fmt.Fprintf(&b, " N%d", ttl)
		}
		b.WriteString("\r\n")
	case 1:
		modes := "SEARP"
		m := sel >> 3 % 5
		want.Kind, want.Value, want.ClientFlags, want.TTL, want.HasTTL = tiers.KindSet, value, uint32(num), int64(ttl), true
		want.Mode = []tiers.Mode{tiers.ModeSet, tiers.ModeAdd, tiers.ModeAppend, tiers.ModeReplace, tiers.ModePrepend}[m]
		want.CompareCAS, want.HasCompareCAS, want.WantCAS = num, true, true
		fmt.Fprintf(&b, "ms %s %d b F%d T%d M%c C%d c q\r\n%s\r\n", enc, len(value), uint32(num), ttl, modes[m], num, value)
	case 2:
		want.Kind, want.CompareCAS, want.HasCompareCAS, want.Invalidate = tiers.KindDelete, num, true, true
		fmt.Fprintf(&b, "md %s b C%d I k\r\n", enc, num)
	default:
		want.Kind, want.Mode, want.Delta, want.Initial, want.WantValue = tiers.KindArith, tiers.ModeDecr, num, num>>7, true
		fmt.Fprintf(&b, "ma %s b MD D%d J%d v\r\n", enc, num, num>>7)
	}
	return b.Bytes(), want
}
