package locality

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"
)

// replyOf parses one reply from data with a connection's reply reader.
func replyOf(data []byte) (bool, error) {
	c := &mcConn{br: bufio.NewReader(bytes.NewReader(data))}
	return c.reply()
}

func TestReply(t *testing.T) {
	for _, c := range []struct {
		in     string
		hit    bool
		errSrv bool
		err    bool
	}{
		{in: "VALUE u:{1}:f0 0 3\r\nabc\r\nEND\r\n", hit: true},
		{in: "END\r\n"},
		{in: "STORED\r\n"},
		{in: "DELETED\r\n"},
		{in: "NOT_FOUND\r\n"},
		{in: "SERVER_ERROR wrong_owner\r\n", errSrv: true},
		{in: "CLIENT_ERROR bad data chunk\r\n", errSrv: true},
		{in: "ERROR\r\n", errSrv: true},
		{in: "VALUE k 0 3\r\nabc\r\n", err: true},        // no END
		{in: "VALUE k 0 x\r\nabc\r\nEND\r\n", err: true}, // bad length
		{in: "VALUE k 0\r\n", err: true},
		{in: "STOR", err: true}, // cut short
	} {
		hit, err := replyOf([]byte(c.in))
		switch {
		case c.errSrv && !errors.Is(err, errServer):
			t.Errorf("%q: %v, want an error reply", c.in, err)
		case c.err && (err == nil || errors.Is(err, errServer)):
			t.Errorf("%q: %v, want a broken connection", c.in, err)
		case !c.err && !c.errSrv && (err != nil || hit != c.hit):
			t.Errorf("%q: hit %v err %v, want hit %v", c.in, hit, err, c.hit)
		}
	}
}

// FuzzReply: any bytes from a server give a reply, an error reply or a
// broken connection, never a panic; a hit needs a whole value and END.
func FuzzReply(f *testing.F) {
	f.Add([]byte("VALUE u:{1}:f0 0 3\r\nabc\r\nEND\r\n")) // a hit
	f.Add([]byte("END\r\n"))                              // a miss
	f.Add([]byte("SERVER_ERROR wrong_owner\r\n"))         // the link's refusal, passed on
	f.Add([]byte("VALUE k 0 -5\r\nEND\r\n"))              // a negative length
	f.Add([]byte("VALUE k 0 99999999999999999999\r\n"))   // a length that overflows
	f.Add([]byte("VALUE k 0 1\r\nab\r\nEND\r\n"))         // a value longer than said
	f.Fuzz(func(t *testing.T, data []byte) {
		hit, err := replyOf(data)
		if hit && (err != nil || !bytes.Contains(data, []byte("END\r\n"))) {
			t.Fatalf("hit from %q (err %v)", data, err)
		}
	})
}

// FuzzStatsBytes: the "bytes" statistic is read from any stats reply, or
// an error; never a panic or a negative size.
func FuzzStatsBytes(f *testing.F) {
	f.Add("STAT pid 1\r\nSTAT bytes 1234\r\nSTAT curr_items 3\r\nEND\r\n") // memcached's shape
	f.Add("STAT pid 1\r\nEND\r\n")                                         // no bytes line
	f.Add("STAT bytes -1\r\nEND\r\n")                                      // negative
	f.Add("STAT bytes 12")                                                 // cut short
	f.Fuzz(func(t *testing.T, in string) {
		n, err := statsBytes(bufio.NewReader(strings.NewReader(in)))
		if err == nil && n < 0 {
			t.Fatalf("%q: %d bytes", in, n)
		}
	})
}

func TestStatsBytes(t *testing.T) {
	n, err := statsBytes(bufio.NewReader(strings.NewReader("STAT pid 1\r\nSTAT bytes 1234\r\nEND\r\n")))
	if err != nil || n != 1234 {
		t.Errorf("%d, %v", n, err)
	}
}
