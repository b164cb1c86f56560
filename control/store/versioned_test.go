package store

import (
	"bytes"
	"testing"
)

// FuzzDecodeVersioned: any bytes either fail to decode, or decode to a
// non-zero version and a payload whose encoding decodes to the same pair
// and is no longer than the input (a non-minimal varint decodes, then
// re-encodes shorter).
func FuzzDecodeVersioned(f *testing.F) {
	f.Add([]byte("V\x01map"))                                      // version 1, short payload
	f.Add([]byte("V\x80\x01"))                                     // version 128, empty payload
	f.Add([]byte("V"))                                             // header without a version
	f.Add([]byte("V\x00x"))                                        // version 0 is never published
	f.Add([]byte("X\x01"))                                         // wrong magic
	f.Add([]byte{})                                                // empty row value
	f.Add([]byte("V\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))     // largest uvarint
	f.Add([]byte("V\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")) // varint overflow
	f.Add([]byte("V\x81\x00"))                                     // non-minimal encoding of 1
	f.Fuzz(func(t *testing.T, b []byte) {
		v, p, err := DecodeVersioned(b)
		if err != nil {
			return
		}
		if v == 0 {
			t.Fatalf("decoded version 0 from %x", b)
		}
		enc := EncodeVersioned(v, p)
		v2, p2, err := DecodeVersioned(enc)
		if err != nil || v2 != v || !bytes.Equal(p2, p) {
			t.Fatalf("round trip of %x: (%d, %x) -> %x -> (%d, %x, %v)", b, v, p, enc, v2, p2, err)
		}
		if len(enc) > len(b) {
			t.Fatalf("re-encoding of %x grew to %x", b, enc)
		}
	})
}

func TestVersionedRoundTrip(t *testing.T) {
	for _, v := range []uint64{1, 127, 128, 1 << 40, ^uint64(0)} {
		enc := EncodeVersioned(v, []byte("payload"))
		got, p, err := DecodeVersioned(enc)
		if err != nil || got != v || string(p) != "payload" {
			t.Fatalf("version %d: got %d %q %v", v, got, p, err)
		}
	}
}
