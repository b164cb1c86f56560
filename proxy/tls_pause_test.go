package proxy_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/internal/tlstest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
)

// TestTLSBackPressure: a TLS client pipelines 300 gets of a 200 KB value
// (60 MB of replies) against the smallest outbound bound and reads only
// once all are sent: the connection pauses and resumes through the TLS
// layer as through gnet's buffer, and every reply arrives whole, in order.
func TestTLSBackPressure(t *testing.T) {
	ca := tlstest.NewCA(t, "pause")
	_, cert, key := ca.WriteFiles(t, t.TempDir(), "server")
	store, err := embedded.New(embedded.Config{MaxBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1, MaxOutboundBytes: proxy.MinOutboundBytes,
		TLS: tlsconn.Config{Cert: cert, Key: key}}
	srv := proxytest.Start(t, cfg, store, proxytest.Loops(t, cfg))
	tc, err := tls.Dial("tcp", srv.Addr(), &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	_ = tc.SetDeadline(time.Now().Add(60 * time.Second))
	value := bytes.Repeat([]byte("v"), 200_000)
	r := bufio.NewReaderSize(tc, 1<<20)
	if _, err := fmt.Fprintf(tc, "set big 0 0 %d\r\n%s\r\n", len(value), value); err != nil {
		t.Fatal(err)
	}
	if l, err := r.ReadString('\n'); err != nil || l != "STORED\r\n" {
		t.Fatalf("set: %q %v", l, err)
	}
	// 300 requests of 20 bytes fit the socket buffers: all are sent
	// before the first reply is read, and their replies (60 MB) exceed
	// every buffer between, so the server pauses at its bound and
	// resumes as the client reads.
	const n = 300
	var req bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&req, "mg big v O%d\r\n", i)
	}
	if _, err := tc.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		head, err := r.ReadString('\n')
		if want := fmt.Sprintf("VA %d O%d\r\n", len(value), i); err != nil || head != want {
			t.Fatalf("reply %d: %q %v, want %q", i, head, err, want)
		}
		if _, err := io.CopyN(io.Discard, r, int64(len(value)+2)); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
	}
}
