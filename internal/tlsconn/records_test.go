package tlsconn

import (
	"bytes"
	"testing"
)

// FuzzStorageEnd: the record cut always lies within the batch, and right
// after the first storage request's data when the batch starts with one.
func FuzzStorageEnd(f *testing.F) {
	f.Add([]byte("mg k v\r\n"))                                   // no storage request: one record
	f.Add([]byte("ms k 3 T0\r\nabc\r\nmg k v\r\n"))               // cut after "abc\r\n"
	f.Add([]byte("set k 0 0 3\r\nabc\r\nget k\r\n"))              // the text protocol's
	f.Add([]byte("mg a v\r\nms k 5\r\nhello\r\nms j 1\r\nx\r\n")) // the first storage request only
	f.Add([]byte("ms k 99\r\nshort"))                             // data past the batch: all of it
	f.Add([]byte("ms k -1\r\nmn\r\n"))                            // a size that is no size
	f.Add([]byte("ms\r\nset k\r\n"))                              // too few fields
	f.Fuzz(func(t *testing.T, p []byte) {
		n := StorageEnd(p)
		if n < 0 || n > len(p) || (len(p) > 0 && n == 0) {
			t.Fatalf("StorageEnd(%q) = %d", p, n)
		}
		for _, first := range []string{"ms k 3 T0\r\nabc\r\n", "set k 0 0 3\r\nabc\r\n"} {
			if bytes.HasPrefix(p, []byte(first)) && n != len(first) {
				t.Fatalf("StorageEnd(%q) = %d, want the end of the first value", p, n)
			}
		}
	})
}
