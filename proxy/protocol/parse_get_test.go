package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// pieces parses in (fed whole, or in chunks of `chunk` bytes when chunk >
// 0) and returns every Command as the keys it carried and whether it was
// the line's last, plus the bytes left and whether the parser closed.
type gotPiece struct {
	op   Opcode
	keys []string
	more bool
	rep  string
}

func parsePieces(t *testing.T, lim Limits, in []byte, chunk int) (out []gotPiece, rest []byte, maxHeld int) {
	t.Helper()
	p := NewParser(lim)
	var cmd Command
	var pending []byte
	src := in
	for {
		if len(src) > 0 {
			step := len(src)
			if chunk > 0 {
				step = min(step, chunk)
			}
			pending = append(pending, src[:step]...)
			src = src[step:]
		}
		maxHeld = max(maxHeld, len(pending))
		for {
			n, err := p.Parse(pending, &cmd)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if n == 0 {
				break
			}
			pending = pending[n:]
			if cmd.Op == OpNone {
				continue
			}
			gp := gotPiece{op: cmd.Op, more: cmd.More(), rep: string(cmd.Reply)}
			if len(cmd.Reqs) > PieceKeys {
				t.Fatalf("a piece of %d keys; at most %d", len(cmd.Reqs), PieceKeys)
			}
			for _, r := range cmd.Reqs {
				gp.keys = append(gp.keys, string(r.Key))
			}
			out = append(out, gp)
		}
		if len(src) == 0 {
			return out, pending, maxHeld
		}
	}
}

func keysOf(ps []gotPiece) []string {
	var all []string
	for _, p := range ps {
		all = append(all, p.keys...)
	}
	return all
}

func numbered(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("key:%d", i)
	}
	return keys
}

// A line within the window is handed out in pieces of PieceKeys keys, in
// order, however its bytes arrive; only the last piece ends the reply.
func TestGetPiecesWhole(t *testing.T) {
	keys := numbered(3*PieceKeys + 5)
	in := []byte("gets  " + strings.Join(keys, "  ") + " \r\nmn\r\n")
	for _, chunk := range []int{0, 1, 7, 1000} {
		ps, rest, _ := parsePieces(t, Limits{}, in, chunk)
		if len(rest) != 0 {
			t.Fatalf("chunk %d: left %q", chunk, rest)
		}
		if len(ps) != 5 || ps[4].op != OpMetaNoop {
			t.Fatalf("chunk %d: %d commands, want 4 pieces and mn: %+v", chunk, len(ps), ps)
		}
		for i, p := range ps[:4] {
			if p.op != OpGets || p.more != (i < 3) || p.rep != "" {
				t.Errorf("chunk %d: piece %d is %+v", chunk, i, p)
			}
		}
		if got := keysOf(ps[:4]); strings.Join(got, " ") != strings.Join(keys, " ") {
			t.Errorf("chunk %d: keys differ: %d of %d", chunk, len(got), len(keys))
		}
	}
}

// A line longer than the window streams: the parser never holds more than
// a window and a read of it, and the keys come out intact even where a
// read or a window boundary cuts one.
func TestGetPiecesStreamed(t *testing.T) {
	const window = 4096
	keys := numbered(20000)
	line := "get " + strings.Join(keys, " ") + "\r\n"
	for _, chunk := range []int{1, 13, 1500, 1 << 20} {
		ps, rest, held := parsePieces(t, Limits{MaxLineLen: window}, []byte(line+"get a\r\n"), chunk)
		if len(rest) != 0 {
			t.Fatalf("chunk %d: left %q", chunk, trunc(rest))
		}
		if chunk < window && held > window+chunk {
			t.Errorf("chunk %d: held %d bytes of the line, want at most a window and a read (%d)", chunk, held, window+chunk)
		}
		last := ps[len(ps)-1]
		if last.op != OpGet || last.more || strings.Join(last.keys, " ") != "a" {
			t.Fatalf("chunk %d: the next line parsed as %+v", chunk, last)
		}
		body := ps[:len(ps)-1]
		if got := keysOf(body); strings.Join(got, " ") != strings.Join(keys, " ") {
			t.Fatalf("chunk %d: %d keys out, want %d", chunk, len(got), len(keys))
		}
		for i, p := range body {
			if p.more != (i < len(body)-1) {
				t.Fatalf("chunk %d: piece %d of %d has more=%v", chunk, i, len(body), p.more)
			}
		}
	}
}

// What a streamed line cannot take back: an over-long key after the first
// window ends the reply with memcached's error after the pieces already
// handed out. Within the first window the error stays alone.
func TestGetStreamedErrors(t *testing.T) {
	const window = 4096
	lim := Limits{MaxLineLen: window}
	long := strings.Repeat("z", KeyMaxLen+1)
	many := strings.Join(numbered(2000), " ")
	cases := []struct {
		name      string
		in        string
		keysOut   bool // pieces with keys come before the end
		lastReply string
	}{
		{"long key first", "get " + long + " " + many + "\r\n", false, "CLIENT_ERROR bad command line format\r\n"},
		{"long key late", "get " + many + " " + long + " a\r\n", true, "CLIENT_ERROR bad command line format\r\n"},
		{"endless token", "get a " + strings.Repeat("y", 3*window) + "\r\n", false, "CLIENT_ERROR bad command line format\r\n"},
		{"nul cuts keys", "get " + many + "\x00 " + long + "\r\n", true, ""},
		{"only spaces", "get" + strings.Repeat(" ", 3*window) + "\r\n", false, "ERROR\r\n"},
		{"gets only spaces then nul", "gets" + strings.Repeat(" ", 3*window) + "\x00k\r\n", false, "ERROR\r\n"},
	}
	for _, tc := range cases {
		for _, chunk := range []int{0, 100} {
			ps, rest, _ := parsePieces(t, lim, []byte(tc.in+"mn\r\n"), chunk)
			if len(rest) != 0 || len(ps) < 2 || ps[len(ps)-1].op != OpMetaNoop {
				t.Fatalf("%s/%d: the line did not end before mn: %d commands, left %q", tc.name, chunk, len(ps), trunc(rest))
			}
			end := ps[len(ps)-2]
			if end.more || end.rep != tc.lastReply || end.op == OpError {
				t.Errorf("%s/%d: last piece %+v, want reply %q", tc.name, chunk, end, tc.lastReply)
			}
			if got := len(keysOf(ps)) > 0; got != tc.keysOut {
				t.Errorf("%s/%d: keys handed out = %v, want %v", tc.name, chunk, got, tc.keysOut)
			}
		}
	}
	// The NUL case hands out exactly the keys before the NUL.
	ps, _, _ := parsePieces(t, lim, []byte("get "+many+"\x00 x y\r\n"), 0)
	if got := keysOf(ps); strings.Join(got, " ") != many {
		t.Errorf("keys before the NUL: %d, want 2000", len(got))
	}
}

// The replies of a line's pieces join into one reply: VALUEs in key
// order, one END; a SERVER_ERROR ends it, and later pieces stay silent.
func TestGetPieceReplies(t *testing.T) {
	keys := numbered(2*PieceKeys + 3)
	answer := func(failAt int) string {
		in := []byte("get " + strings.Join(keys, " ") + "\r\nget x\r\n")
		p := NewParser(Limits{})
		var cmd Command
		var out []byte
		seen := 0
		for len(in) > 0 {
			n, err := p.Parse(in, &cmd)
			if err != nil || n == 0 {
				t.Fatalf("Parse = %d, %v", n, err)
			}
			in = in[n:]
			res := make([]tiers.Result, len(cmd.Reqs))
			for i := range res {
				res[i] = tiers.Result{Status: tiers.StatusHit, Value: []byte("v")}
				if seen == failAt {
					res[i] = tiers.Result{Status: tiers.StatusError, Err: errors.New("backend down")}
				}
				seen++
			}
			out = cmd.AppendReply(out, res)
		}
		return string(out)
	}
	var all strings.Builder
	for _, k := range keys {
		all.WriteString("VALUE " + k + " 0 1\r\nv\r\n")
	}
	tail := "VALUE x 0 1\r\nv\r\nEND\r\n"
	if got, want := answer(-1), all.String()+"END\r\n"+tail; got != want {
		t.Errorf("all hits: %q\nwant %q", trunc([]byte(got)), trunc([]byte(want)))
	}
	// An error in the second piece: the first piece's values, the error,
	// nothing of the third, then the next line as usual.
	var first strings.Builder
	for _, k := range keys[:PieceKeys] {
		first.WriteString("VALUE " + k + " 0 1\r\nv\r\n")
	}
	if got, want := answer(PieceKeys+1), first.String()+"SERVER_ERROR backend down\r\n"+tail; got != want {
		t.Errorf("error in the second piece: %q\nwant %q", trunc([]byte(got)), trunc([]byte(want)))
	}
	// In the first piece of a one-piece line: the error alone, as before.
	if got, want := answer(len(keys)), all.String()+"END\r\nSERVER_ERROR backend down\r\n"; got != want {
		t.Errorf("error in a one-piece line: %q\nwant %q", trunc([]byte(got)), trunc([]byte(want)))
	}
}

// Streamed lines against memcached: with a small window every long line of
// the differential table streams, and the replies must still be
// memcached's, fed whole or a byte at a time.
func TestDifferentialStreamed(t *testing.T) {
	needMemcached(t)
	byName := map[string]string{}
	for _, c := range diffCases {
		byName[c.name] = c.in
	}
	for _, name := range []string{"get 3000 keys", "gets 8000 keys", "get 200KB line", "get nul in a long line",
		"get only spaces", "long gets", "get pieces then pipeline", "get long key in the first window"} {
		in := []byte(byName[name])
		if name == "get long key in the first window" {
			in = []byte("set a 0 0 1\r\n1\r\nmn\r\nget a " + strings.Repeat("z", 300) + " " + strings.Repeat("a ", 5000) + "\r\nmn\r\n")
		}
		if len(in) == 0 {
			t.Fatalf("no case %q", name)
		}
		t.Run(name, func(t *testing.T) {
			mcCAS := mcReset(t)
			want, _ := mcExchange(t, in)
			for _, byteWise := range []bool{false, true} {
				store, cas := newTestStore(t, caseClock())
				got, closed, rest := runParser(t, Limits{MaxLineLen: 4096}, in, byteWise, store)
				got = renumberCAS(got, mcCAS-cas)
				if closed || len(rest) != 0 || !bytes.Equal(got, want) {
					t.Fatalf("byte-wise %v: closed=%v left %d\n got %q\nwant %q", byteWise, closed, len(rest), trunc(got), trunc(want))
				}
			}
		})
	}
}
