package metacodec

import (
	"reflect"
	"testing"
)

// FuzzReplyParser checks, for any bytes:
//   - ParseReply never panics and never claims more bytes than it has;
//   - a prefix of a parsable buffer parses to nothing yet or to the same
//     length, never to an error (a reply split across reads must wait);
//   - a parsed reply spelt again by appendReply parses to the same Reply
//     (the round-trip property).
func FuzzReplyParser(f *testing.F) {
	for _, s := range replySamples {
		f.Add([]byte(s))
	}
	f.Add([]byte("VA 3 t-1\r\nab"))          // value cut short
	f.Add([]byte("VA 3\r\nabcd\r\n"))        // value longer than announced
	f.Add([]byte("HD t\r\n"))                // flag without its number
	f.Add([]byte("HD  c1\r\n"))              // two spaces
	f.Add([]byte("VA 18446744073709551616")) // size overflow
	f.Add([]byte("SERVER_ERROR \r\n"))       // empty message
	f.Add([]byte("EN\r\nEN\r\nHD\r\n"))      // a pipeline
	f.Fuzz(func(t *testing.T, buf []byte) {
		var r Reply
		n, err := ParseReply(buf, 1<<16, &r)
		if n < 0 || n > len(buf) {
			t.Fatalf("n=%d for %d bytes", n, len(buf))
		}
		if err != nil && n != 0 {
			t.Fatalf("n=%d with error %v", n, err)
		}
		if n == 0 {
			return
		}
		for k := 0; k < n; k++ {
			var p Reply
			m, perr := ParseReply(buf[:k], 1<<16, &p)
			if perr != nil || m != 0 {
				t.Fatalf("prefix %d of %q: n=%d err=%v", k, buf[:n], m, perr)
			}
		}
		again := appendReply(nil, &r)
		var r2 Reply
		m, err := ParseReply(again, 1<<16, &r2)
		if err != nil || m != len(again) {
			t.Fatalf("re-spelt %q as %q: n=%d err=%v", buf[:n], again, m, err)
		}
		if len(r.Data) == 0 {
			r.Data = nil
		}
		if len(r2.Data) == 0 {
			r2.Data = nil
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip of %q:\n %+v\n %+v", buf[:n], r, r2)
		}
	})
}
