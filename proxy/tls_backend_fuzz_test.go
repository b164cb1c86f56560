package proxy

import (
	"bytes"
	"testing"
)

// FuzzStorageEnd: the record cut always lies within the batch and, when a
// storage request comes first, right after its data.
func FuzzStorageEnd(f *testing.F) {
	f.Add([]byte("mg k v\r\n"))                                 // no storage request: one record
	f.Add([]byte("ms k 3 T0\r\nabc\r\nmg k v\r\n"))             // cut after "abc\r\n"
	f.Add([]byte("mg a v\r\nms k 5\r\nhello\r\nms j 1\r\nx\r\n")) // the first storage request only
	f.Add([]byte("ms k 99\r\nshort"))                           // data past the batch: all of it
	f.Add([]byte("ms k -1\r\nmn\r\n"))                          // a size that is no size
	f.Add([]byte("ms\r\nms k\r\n"))                             // too few fields
	f.Fuzz(func(t *testing.T, p []byte) {
		n := storageEnd(p)
		if n < 0 || n > len(p) || (len(p) > 0 && n == 0) {
			t.Fatalf("storageEnd(%q) = %d", p, n)
		}
		if bytes.HasPrefix(p, []byte("ms k 3 T0\r\nabc\r\n")) && n != len("ms k 3 T0\r\nabc\r\n") {
			t.Fatalf("storageEnd(%q) = %d, want the end of the first value", p, n)
		}
	})
}
