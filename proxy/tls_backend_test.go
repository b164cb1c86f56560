package proxy_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/internal/tlstest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/memcached"
)

// exchangeQuiet is exchange without the request in its failure.
func exchangeQuiet(t *testing.T, c net.Conn, r *bufio.Reader, req string, n int) string {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%v after %.80q", err, b.String())
		}
		b.WriteString(line)
	}
	return b.String()
}

// startOverPool starts a plaintext proxy over one memcached pool.
func startOverPool(t *testing.T, addr string, dial tlsconn.Dial) (*proxy.Server, *memcached.Pool) {
	t.Helper()
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 2}
	loops := proxytest.Loops(t, cfg)
	p, err := memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: addr}}, TLS: dial,
		RequestTimeout: time.Second, ProbeInterval: 50 * time.Millisecond}, loops)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return proxytest.Start(t, cfg, p, loops), p
}

// TestTLSBackend: a pool reaches memcached -Z, verifying its certificate,
// and with a client certificate one that requires it; requests pipelined
// through, a value of 600 KB among them. A pool that trusts another
// authority gets nothing stored.
func TestTLSBackend(t *testing.T) {
	ca := tlstest.NewCA(t, "backend")
	dir := t.TempDir()
	caPath, cert, key := ca.WriteFiles(t, dir, "memcached")
	_, ccert, ckey := ca.WriteFiles(t, t.TempDir(), "strata")
	cases := []struct {
		name  string
		extra []string
		dial  tlsconn.Dial
		ping  *tls.Config
	}{
		{"server-auth", nil, tlsconn.Dial{On: true, CA: caPath}, nil},
		{"mutual", []string{"-o", "ssl_ca_cert=" + caPath + ",ssl_verify_mode=2"},
			tlsconn.Dial{On: true, CA: caPath, Cert: ccert, Key: ckey, ServerName: "localhost"},
			&tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{ca.Cert(t, "ping")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := memcachedtest.StartTLS(t, c.ping, cert, key, c.extra...)
			srv, pool := startOverPool(t, m.Addr, c.dial)
			nc, err := net.Dial("tcp", srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			r := bufio.NewReaderSize(nc, 1<<20)
			// Values around and past a record (16 KiB), pipelined with
			// the request after them.
			for _, n := range []int{16000, 17000, 40000, 600_000} {
				big := strings.Repeat("b", n)
				if got := exchangeQuiet(t, nc, r, fmt.Sprintf("set big 0 0 %d\r\n%s\r\nget big\r\n", n, big), 4); got != fmt.Sprintf("STORED\r\nVALUE big 0 %d\r\n%s\r\nEND\r\n", n, big) {
					t.Fatalf("value of %d bytes: %.80q", n, got)
				}
			}
			var req, want strings.Builder
			for i := 0; i < 300; i++ {
				fmt.Fprintf(&req, "set k%d 0 0 3\r\n%03d\r\nget k%d\r\n", i, i, i)
				fmt.Fprintf(&want, "STORED\r\nVALUE k%d 0 3\r\n%03d\r\nEND\r\n", i, i)
			}
			if got := exchange(t, nc, r, req.String(), 300*4); got != want.String() {
				t.Fatalf("pipelined: %.200q", got)
			}
			if h, ok := pool.TLSHandshakes(); !ok || h.Handshakes == 0 || h.Errors[tlsconn.ReasonBadServerCert] != 0 {
				t.Fatalf("the pool's handshakes: %+v %v", h, ok)
			}
		})
	}
	t.Run("untrusted", func(t *testing.T) {
		m := memcachedtest.StartTLS(t, nil, cert, key)
		other := tlstest.NewCA(t, "other")
		otherCA, _, _ := other.WriteFiles(t, t.TempDir(), "x")
		srv, pool := startOverPool(t, m.Addr, tlsconn.Dial{On: true, CA: otherCA})
		nc, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if got := exchange(t, nc, bufio.NewReader(nc), "set k 0 0 1\r\nx\r\n", 1); strings.HasPrefix(got, "STORED") {
			t.Fatalf("stored through a server whose certificate the pool cannot verify: %q", got)
		}
		// Counted as the backend's certificate's fault (the probes keep trying).
		poll.Until(t, 10*time.Second, "a bad_server_cert counted", func() bool {
			h, _ := pool.TLSHandshakes()
			return h.Errors[tlsconn.ReasonBadServerCert] > 0
		})
	})
}
