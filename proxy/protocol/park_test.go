package protocol

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// FuzzParkResume: a connection whose Parser is parked whenever Park allows
// it, and replaced by another Parser resumed in the parked Mode, parses
// any byte stream, delivered in any chunks, exactly as one Parser kept for
// the connection's life does. The stream is fed step+1 bytes at a time,
// so parks also happen while a request is only partly received.
func FuzzParkResume(f *testing.F) {
	for _, s := range []string{
		"get a\r\nget b c\r\nset k 0 0 2\r\nhi\r\n",             // text requests, each one at rest after
		"set k 0 0 9999\r\n" + strings.Repeat("x", 40),          // a refused block being swallowed: no park
		"get " + strings.Repeat("k ", 300) + "\r\nget z\r\n",    // a get line served in pieces: no park
		"set a 0 0 3\r\nu x\r\nset a 0 0 3\r\nu p\r\nget k\r\n", // authentication: the Mode keeps it
		"mg k v\r\nms k 2\r\nhi\r\nmn\r\n",
		string(breq(binGet, "k", "", "", 1, 0)) + string(breq(binGet, "j", "", "", 2, 0)), // binary: the Mode keeps the protocol
		string(cat(breq(binSASLAuth, "PLAIN", "", "\x00u\x00p", 1, 0), breq(binGet, "k", "", "", 2, 0))),
	} {
		for _, step := range []byte{0, 3, 255} {
			f.Add([]byte(s), step, false)
			f.Add([]byte(s), step, true)
		}
	}
	f.Fuzz(func(t *testing.T, buf []byte, step byte, withAuth bool) {
		lim := Limits{MaxItemSize: 4096, MaxLineLen: 512}
		if withAuth {
			lim.Auth = fixedUser{}
		}
		kept := runChunked(buf, int(step)+1, lim, false)
		parked := runChunked(buf, int(step)+1, lim, true)
		if kept != parked {
			t.Fatalf("one parser:\n%s\nparked and resumed:\n%s", kept, parked)
		}
	})
}

// runChunked parses buf as it arrives step bytes at a time and describes
// every Parse call's outcome and reply. With park, the Parser is swapped
// for a fresh one, resumed in its Mode, after every call that leaves it
// at rest.
func runChunked(buf []byte, step int, lim Limits, park bool) string {
	var b strings.Builder
	p := NewParser(lim)
	var cmd Command
	var out []byte
	off, avail := 0, 0
	for i := 0; i < 2000 && off < len(buf); i++ {
		n, err := p.Parse(buf[off:avail], &cmd)
		fmt.Fprintf(&b, "n=%d err=%v op=%v close=%v", n, err, cmd.Op, cmd.Close)
		if n > 0 || err != nil {
			res := make([]tiers.Result, len(cmd.Reqs))
			for j := range res {
				res[j] = tiers.Result{Status: tiers.StatusHit, Value: []byte("v"), Err: errors.New("e")}
			}
			out = cmd.AppendReply(out[:0], res)
			fmt.Fprintf(&b, " reply=%q", out)
		}
		b.WriteByte('\n')
		if err != nil {
			break
		}
		off += n
		if n == 0 {
			if avail == len(buf) {
				break
			}
			avail = min(avail+step, len(buf))
		}
		if park {
			if m, ok := p.Park(); ok {
				p = NewParser(Limits{MaxItemSize: 1 << 20}) // another connection's, with its own history
				_, _ = p.Parse([]byte("set x 0 0 1\r\n"), &cmd)
				p.Resume(lim, m)
			}
		}
	}
	return b.String()
}

// BenchmarkParkResume is what a connection pays per quiet spell (park its
// parser, resume one when the next request comes) beside the parse of a
// one-key get.
func BenchmarkParkResume(b *testing.B) {
	lim := Limits{}
	req := []byte("get k\r\n")
	for _, park := range []bool{false, true} {
		b.Run(fmt.Sprintf("park=%v", park), func(b *testing.B) {
			p := NewParser(lim)
			var cmd Command
			for b.Loop() {
				_, _ = p.Parse(req, &cmd)
				if park {
					m, _ := p.Park()
					p.Resume(lim, m)
				}
			}
		})
	}
}
