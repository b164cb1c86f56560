package proxy_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/internal/tlstest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
)

// tlsFixture is a server with client TLS over an embedded store, and the
// files its certificate came from.
type tlsFixture struct {
	srv                    *proxy.Server
	ca                     *tlstest.CA
	caPath, certPath, keyP string
}

func startTLS(t *testing.T, verify string, timeout time.Duration) *tlsFixture {
	t.Helper()
	ca := tlstest.NewCA(t, "strata-test")
	caPath, certPath, keyPath := ca.WriteFiles(t, t.TempDir(), "server")
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 2, ListenPlain: "127.0.0.1:0",
		TLS: tlsconn.Config{Cert: certPath, Key: keyPath, Verify: verify, HandshakeTimeout: timeout}}
	if verify != tlsconn.VerifyNone {
		cfg.TLS.CA = caPath
	}
	srv := proxytest.Start(t, cfg, store, proxytest.Loops(t, cfg))
	return &tlsFixture{srv: srv, ca: ca, caPath: caPath, certPath: certPath, keyP: keyPath}
}

func (f *tlsFixture) clientConfig(t *testing.T, withCert bool) *tls.Config {
	c := &tls.Config{RootCAs: f.ca.Pool, ServerName: "localhost"}
	if withCert {
		c.Certificates = []tls.Certificate{f.ca.Cert(t, "client")}
	}
	return c
}

// TestTLSClients: gomemcache through a TLS dialer, the text and meta
// protocols pipelined, both TLS versions, a value at the item limit, a
// resumed session, and the plaintext listener beside.
func TestTLSClients(t *testing.T) {
	f := startTLS(t, tlsconn.VerifyNone, 0)
	cfg := f.clientConfig(t, false)
	mc := memcache.New(f.srv.Addr())
	mc.DialContext = (&tls.Dialer{Config: cfg}).DialContext
	// gomemcache's default 500 ms per call is less than a megabyte's set
	// takes over TLS under the race detector on a busy machine.
	mc.Timeout = 10 * time.Second
	if err := mc.Set(&memcache.Item{Key: "k", Value: []byte("over tls")}); err != nil {
		t.Fatal(err)
	}
	it, err := mc.Get("k")
	if err != nil || string(it.Value) != "over tls" {
		t.Fatalf("get: %v %v", it, err)
	}
	big := bytes.Repeat([]byte("x"), 1000*1000)
	if err := mc.Set(&memcache.Item{Key: "big", Value: big}); err != nil {
		t.Fatal(err)
	}
	if it, err := mc.Get("big"); err != nil || !bytes.Equal(it.Value, big) {
		t.Fatalf("big get: %v", err)
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		c := cfg.Clone()
		c.MinVersion, c.MaxVersion = v, v
		tc, err := tls.Dial("tcp", f.srv.Addr(), c)
		if err != nil {
			t.Fatalf("version %x: %v", v, err)
		}
		var req strings.Builder
		for i := 0; i < 200; i++ {
			fmt.Fprintf(&req, "ms m%d 2 T0\r\nhi\r\nmg m%d v\r\nget k\r\n", i, i)
		}
		got := exchange(t, tc, bufio.NewReader(tc), req.String(), 200*6)
		want := strings.Repeat("HD\r\nVA 2\r\nhi\r\nVALUE k 0 8\r\nover tls\r\nEND\r\n", 200)
		if got != want {
			t.Fatalf("version %x: pipelined replies differ: %.200q", v, got)
		}
		_ = tc.Close()
	}
	// Resumption: a second connection with the same session cache.
	rc := cfg.Clone()
	rc.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	for i := 0; i < 2; i++ {
		tc, err := tls.Dial("tcp", f.srv.Addr(), rc)
		if err != nil {
			t.Fatal(err)
		}
		// TLS 1.3 sends the ticket after the handshake: a round trip reads it.
		if got := exchange(t, tc, bufio.NewReader(tc), "mn\r\n", 1); got != "MN\r\n" {
			t.Fatalf("mn: %q", got)
		}
		if resumed := tc.ConnectionState().DidResume; resumed != (i == 1) {
			t.Fatalf("connection %d: resumed %v", i, resumed)
		}
		_ = tc.Close()
	}
	pc, err := net.Dial("tcp", f.srv.PlainAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if got := exchange(t, pc, bufio.NewReader(pc), "get k\r\n", 3); got != "VALUE k 0 8\r\nover tls\r\nEND\r\n" {
		t.Fatalf("plaintext listener: %q", got)
	}
}

// expectRefused dials the TLS port with cfg and expects the handshake or
// the first exchange to fail.
func expectRefused(t *testing.T, addr string, cfg *tls.Config) {
	t.Helper()
	tc, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return
	}
	defer tc.Close()
	_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(tc, "mn\r\n"); err == nil {
		if _, err = bufio.NewReader(tc).ReadString('\n'); err == nil {
			t.Fatalf("a client the server should refuse was served")
		}
	}
}

// waitErrors polls until the store counted want handshake failures of
// reason.
func waitErrors(t *testing.T, srv *proxy.Server, reason string, want uint64) {
	t.Helper()
	poll.Until(t, 10*time.Second, fmt.Sprintf("%d %s handshake errors", want, reason), func() bool {
		st, _ := srv.TLSStats()
		return st.Errors[reason] >= want
	})
}

// TestTLSRefusals: a plaintext client on the TLS port, no client
// certificate, and one from another authority are refused and counted;
// a client with a good certificate is served.
func TestTLSRefusals(t *testing.T) {
	f := startTLS(t, tlsconn.VerifyRequire, 0)
	pc, err := net.Dial("tcp", f.srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	_ = pc.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.WriteString(pc, "get k\r\n")
	if b, err := io.ReadAll(pc); err != nil || bytes.Contains(b, []byte("END")) {
		t.Fatalf("plaintext on the TLS port: %q %v", b, err)
	}
	_ = pc.Close()
	waitErrors(t, f.srv, tlsconn.ReasonPlaintext, 1)

	expectRefused(t, f.srv.Addr(), f.clientConfig(t, false))
	other := tlstest.NewCA(t, "other")
	bad := f.clientConfig(t, false)
	bad.Certificates = []tls.Certificate{other.Cert(t, "intruder")}
	expectRefused(t, f.srv.Addr(), bad)
	waitErrors(t, f.srv, tlsconn.ReasonBadClientCert, 2)

	tc, err := tls.Dial("tcp", f.srv.Addr(), f.clientConfig(t, true))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	if got := exchange(t, tc, bufio.NewReader(tc), "mn\r\n", 1); got != "MN\r\n" {
		t.Fatalf("mn: %q", got)
	}
}

// TestTLSHalfOpen: connections that never finish their handshake (silent,
// or a truncated ClientHello) are closed at the timeout and counted, and
// a client meanwhile is served as usual. STRATA_TLS_HALF_OPEN sets how
// many (300 by default; the 10,000 needs that many descriptors
// twice over).
func TestTLSHalfOpen(t *testing.T) {
	n := 300
	if v, err := strconv.Atoi(os.Getenv("STRATA_TLS_HALF_OPEN")); err == nil && v > 0 {
		n = v
	}
	timeout := 500 * time.Millisecond
	f := startTLS(t, tlsconn.VerifyNone, timeout)
	var half []net.Conn
	defer func() {
		for _, c := range half {
			_ = c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", f.srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			_, _ = c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01}) // a ClientHello's first bytes
		}
		half = append(half, c)
	}
	tc, err := tls.Dial("tcp", f.srv.Addr(), f.clientConfig(t, false))
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	r := bufio.NewReader(tc)
	for i := 0; i < 100; i++ {
		if got := exchange(t, tc, r, "mn\r\n", 1); got != "MN\r\n" {
			t.Fatalf("mn: %q", got)
		}
	}
	waitErrors(t, f.srv, tlsconn.ReasonTimeout, uint64(n))
	for _, c := range half[:10] {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatal("a half-open connection got bytes instead of being closed")
		} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("a half-open connection is still open past the handshake timeout")
		}
	}
}

// serialOf handshakes and returns the serial of the certificate the
// server presented.
func serialOf(t *testing.T, addr string, cfg *tls.Config) string {
	t.Helper()
	tc, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	return certSerial(tc.ConnectionState().PeerCertificates[0])
}

func certSerial(c *x509.Certificate) string { return c.SerialNumber.Text(16) }
