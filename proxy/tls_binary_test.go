package proxy_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/tlsconn"
)

// binReq spells one binary-protocol request.
func binReq(opcode uint8, key, extras, value string, opaque uint32) []byte {
	h := make([]byte, 24, 24+len(extras)+len(key)+len(value))
	h[0], h[1] = 0x80, opcode
	binary.BigEndian.PutUint16(h[2:], uint16(len(key)))
	h[4] = byte(len(extras))
	binary.BigEndian.PutUint32(h[8:], uint32(len(extras)+len(key)+len(value)))
	binary.BigEndian.PutUint32(h[12:], opaque)
	return append(append(append(h, extras...), key...), value...)
}

// binReplies reads binary responses until the one to opcode last, and
// returns them with their CAS zeroed (a store's CAS differs between two
// runs of the same requests).
func binReplies(t *testing.T, r *bufio.Reader, last uint8) [][]byte {
	t.Helper()
	var out [][]byte
	for {
		h := make([]byte, 24)
		if _, err := io.ReadFull(r, h); err != nil {
			t.Fatalf("after %d responses: %v", len(out), err)
		}
		if h[0] != 0x81 {
			t.Fatalf("response magic %#x", h[0])
		}
		body := make([]byte, binary.BigEndian.Uint32(h[8:]))
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		clear(h[16:24])
		out = append(out, append(h, body...))
		if h[1] == last {
			return out
		}
	}
}

// TestBinaryOverTLS: the binary protocol is served over TLS as over
// plaintext: a set and get round trip, a value spanning several TLS
// records, and a pipeline of quiet sets and gets closed by a noop answer
// the same bytes on the TLS listener and on the plaintext one beside it
// (CAS aside).
func TestBinaryOverTLS(t *testing.T) {
	f := startTLS(t, tlsconn.VerifyNone, 0)
	big := strings.Repeat("r", 40<<10)              // more than two 16 KiB records
	setExtras := "\x00\x00\x00\x07\x00\x00\x00\x00" // flags 7, no expiry
	var req []byte
	req = append(req, binReq(0x01, "k", setExtras, "hello", 1)...) // set
	req = append(req, binReq(0x00, "k", "", "", 2)...)             // get
	req = append(req, binReq(0x01, "big", setExtras, big, 3)...)
	req = append(req, binReq(0x0c, "big", "", "", 4)...) // getk
	for i := range 200 {
		req = append(req, binReq(0x11, fmt.Sprintf("q%d", i), setExtras, fmt.Sprint(i), uint32(100+i))...) // setq
	}
	for i := range 200 {
		req = append(req, binReq(0x0d, fmt.Sprintf("q%d", i), "", "", uint32(400+i))...) // getkq, hits
	}
	req = append(req, binReq(0x0d, "absent", "", "", 999)...) // getkq, a miss: no answer
	req = append(req, binReq(0x0a, "", "", "", 1000)...)      // noop ends the pipeline

	run := func(c net.Conn) [][]byte {
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		go func() { _, _ = c.Write(req) }() // replies flow while the client writes
		return binReplies(t, bufio.NewReader(c), 0x0a)
	}
	tc, err := tls.Dial("tcp", f.srv.Addr(), f.clientConfig(t, false))
	if err != nil {
		t.Fatal(err)
	}
	overTLS := run(tc)
	pc, err := net.Dial("tcp", f.srv.PlainAddr())
	if err != nil {
		t.Fatal(err)
	}
	plain := run(pc)

	if len(overTLS) != 2+2+200+1 {
		t.Fatalf("%d responses over TLS, want %d", len(overTLS), 205)
	}
	get := overTLS[1]
	if status := binary.BigEndian.Uint16(get[6:]); status != 0 || !bytes.Equal(get[24:], []byte("\x00\x00\x00\x07hello")) {
		t.Fatalf("get over TLS: status %d body %q", status, get[24:])
	}
	if getk := overTLS[3]; !bytes.HasSuffix(getk, []byte("big"+big)) {
		t.Fatalf("getk of the large value over TLS: %d bytes", len(getk))
	}
	if len(plain) != len(overTLS) {
		t.Fatalf("%d responses over plaintext, %d over TLS", len(plain), len(overTLS))
	}
	for i := range plain {
		if !bytes.Equal(plain[i], overTLS[i]) {
			t.Fatalf("response %d differs: plaintext %.80q, TLS %.80q", i, plain[i], overTLS[i])
		}
	}
}
