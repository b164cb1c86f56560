package protocol

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
)

// The differential tests answer the parser's Requests with the store users
// run by default, the embedded tier, so every reply that depends on item
// state comes from real strata code on both sides of the comparison.
//
// Two things legitimately differ from the memcached the replies are
// compared with, and the tests take both out instead of bending the store:
//   - CAS uniques. Both number writes from one counter, but memcached's has
//     been running all along. Each case first gives both servers the same
//     history (resetInput), notes where each counter then stands, and
//     renumbers strata's uniques by the difference: a case passes only if
//     strata takes a CAS unique for exactly the writes memcached does.
//     After the reset both counters are past 2, so the compare values the
//     inputs spell (0, 1, 2, and 5 only for absent keys) match no item on
//     either side; the large ones are out of reach of a case's writes.
//   - The clock. The store's clock stands still at the second the case
//     started (read once, so absolute exptimes are judged against the same
//     present as memcached's), which makes every TTL decision within a case
//     deterministic. No case observes an item whose relative TTL could run
//     out while it runs, so the stopped clock and memcached's running one
//     agree on every reply.

// resetInput empties a server and ends with a probe whose reply carries the
// server's last CAS unique.
var (
	resetInput = []byte("flush_all\r\nms strata-cas-probe 1 c\r\nx\r\nmd strata-cas-probe q\r\n")
	resetReply = regexp.MustCompile(`^OK\r\nHD c(\d+)\r\n$`)
)

// resetCAS parses the reply to resetInput.
func resetCAS(t testing.TB, who string, reply []byte) uint64 {
	t.Helper()
	m := resetReply.FindSubmatch(reply)
	if m == nil {
		t.Fatalf("%s: reset replied %q", who, reply)
	}
	cas, err := strconv.ParseUint(string(m[1]), 10, 64)
	if err != nil {
		t.Fatalf("%s: reset replied %q: %v", who, reply, err)
	}
	return cas
}

// mcReset empties memcached and returns its last CAS unique.
func mcReset(t testing.TB) uint64 {
	t.Helper()
	got, closed := mcExchange(t, resetInput)
	if closed {
		t.Fatalf("memcached closed on reset: %q", got)
	}
	return resetCAS(t, "memcached", got)
}

// testStore is an embedded store behind the parser, with a stopped clock.
type testStore struct {
	st *embedded.Store
}

// newTestStore returns an empty store whose clock reads now, taken through
// the same reset as memcached, and the last CAS unique it has handed out.
// Its configuration is the default, which matches the memcached the tests
// start (-m 64, default -I).
func newTestStore(t testing.TB, now int64) (*testStore, uint64) {
	t.Helper()
	st, err := embedded.New(embedded.Config{Now: func() int64 { return now }})
	if err != nil {
		t.Fatalf("embedded.New: %v", err)
	}
	s := &testStore{st: st}
	out, closed, rest := runParser(t, Limits{}, resetInput, false, s)
	if closed || len(rest) != 0 {
		t.Fatalf("store reset: closed=%v, left %q", closed, rest)
	}
	return s, resetCAS(t, "store", out)
}

// do runs each Request through the store in order, as the proxy does for
// the Requests of one Command, and returns their Results.
func (s *testStore) do(reqs []tiers.Request) []tiers.Result {
	res := make([]tiers.Result, len(reqs))
	for i := range reqs {
		op := tiers.Op{Req: reqs[i]}
		s.st.Do(&op)
		res[i] = op.Res
	}
	return res
}

// caseClock is the second a case's stores stand still at.
func caseClock() int64 { return time.Now().Unix() }

// diffRun compares one input with memcached: it resets memcached, sends
// it in, and runs it through the parser with a fresh store, whole and (with
// byteWise) one byte at a time, and fails t on any difference. label names
// the input in failure messages.
func diffRun(t *testing.T, label string, in []byte, byteWise bool) {
	t.Helper()
	mcCAS := mcReset(t)
	want, wantClosed := mcExchange(t, in)
	now := caseClock()
	run := func(byteWise bool) ([]byte, bool, []byte) {
		store, cas := newTestStore(t, now)
		if cas > mcCAS {
			t.Fatalf("%s: store's CAS counter (%d) is ahead of memcached's (%d) after the same reset", label, cas, mcCAS)
		}
		out, closed, rest := runParser(t, Limits{}, in, byteWise, store)
		return renumberCAS(out, mcCAS-cas), closed, rest
	}
	got, closed, rest := run(false)
	if !closed && len(rest) != 0 {
		t.Errorf("%s: left %d bytes unparsed of %q: %q", label, len(rest), trunc(in), trunc(rest))
	}
	if !bytes.Equal(got, want) || closed != wantClosed {
		t.Fatalf("%s: input %q\n got %q closed=%v\nwant %q closed=%v", label, trunc(in), trunc(got), closed, trunc(want), wantClosed)
	}
	if !byteWise {
		return
	}
	got2, closed2, _ := run(true)
	if !bytes.Equal(got2, got) || closed2 != closed {
		t.Fatalf("%s: byte-wise feeding differs:\n got %q closed=%v\nwant %q closed=%v", label, trunc(got2), closed2, trunc(got), closed)
	}
}

var metaReplyCodes = map[string]bool{"HD": true, "VA": true, "EN": true, "NS": true, "EX": true, "NF": true, "MN": true}

// renumberCAS returns reply with every non-zero CAS unique it reports (the
// fifth field of a VALUE line, the c return flag of a meta reply) raised
// by delta. Zero means "no CAS" and stays. Data blocks are skipped by their
// announced length so their bytes are never taken for reply lines; a
// trailing unfinished line is kept as it is.
func renumberCAS(reply []byte, delta uint64) []byte {
	out := make([]byte, 0, len(reply)+64)
	for len(reply) > 0 {
		end := bytes.Index(reply, []byte("\r\n"))
		if end < 0 {
			return append(out, reply...)
		}
		f := strings.Split(string(reply[:end]), " ")
		reply = reply[end+2:]
		data := -1
		switch {
		case f[0] == "VALUE" && (len(f) == 4 || len(f) == 5):
			data, _ = strconv.Atoi(f[3])
			if len(f) == 5 {
				f[4] = shiftCAS(f[4], delta)
			}
		case metaReplyCodes[f[0]]:
			first := 1
			if f[0] == "VA" && len(f) > 1 {
				data, _ = strconv.Atoi(f[1])
				first = 2
			}
			for i := first; i < len(f); i++ {
				if len(f[i]) > 1 && f[i][0] == 'c' {
					f[i] = "c" + shiftCAS(f[i][1:], delta)
				}
			}
		}
		out = append(out, strings.Join(f, " ")...)
		out = append(out, "\r\n"...)
		if data >= 0 {
			n := min(data+2, len(reply))
			out = append(out, reply[:n]...)
			reply = reply[n:]
		}
	}
	return out
}

func shiftCAS(tok string, delta uint64) string {
	v, err := strconv.ParseUint(tok, 10, 64)
	if err != nil || v == 0 || strconv.FormatUint(v, 10) != tok {
		return tok
	}
	return strconv.FormatUint(v+delta, 10)
}

func TestRenumberCAS(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"VALUE k 0 1 5\r\na\r\nEND\r\n", "VALUE k 0 1 105\r\na\r\nEND\r\n"},
		{"VALUE k 0 1\r\na\r\nEND\r\n", "VALUE k 0 1\r\na\r\nEND\r\n"},
		{"VALUE k 0 1 0\r\na\r\nEND\r\n", "VALUE k 0 1 0\r\na\r\nEND\r\n"},
		// A data block that looks like a reply is left alone.
		{"VA 10 c7 kk\r\nHD c1 x c2\r\nHD c3\r\n", "VA 10 c107 kk\r\nHD c1 x c2\r\nHD c103\r\n"},
		{"VALUE k 0 7 1\r\nHD c1\r\n\r\nEND\r\n", "VALUE k 0 7 101\r\nHD c1\r\n\r\nEND\r\n"},
		{"HD c0 O1 kc5\r\nEX c\r\nNS cx\r\n", "HD c0 O1 kc5\r\nEX c\r\nNS cx\r\n"},
		{"STORED\r\n5\r\nHD c", "STORED\r\n5\r\nHD c"},
		{"VA 3 c9\r\nab", "VA 3 c109\r\nab"},
	} {
		if got := renumberCAS([]byte(tc.in), 100); string(got) != tc.want {
			t.Errorf("renumberCAS(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
