package proxy_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/internal/tlstest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
)

// talk sends req on c and reads reply lines until one equals last.
func talk(t *testing.T, c net.Conn, r *bufio.Reader, req, last string) string {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", b.String(), err)
		}
		if l == last {
			return b.String()
		}
		b.WriteString(l)
	}
}

// TestRefreshCerts: refresh_certs after the files were replaced makes new
// handshakes present the new certificate while open connections carry
// on; a broken key is refused whole, naming the file, even with noreply;
// the plaintext listener beside may send it; pipelined requests keep
// their order around it.
func TestRefreshCerts(t *testing.T) {
	f := startTLS(t, tlsconn.VerifyNone, 0)
	cfg := f.clientConfig(t, false)
	before := serialOf(t, f.srv.Addr(), cfg)
	old, err := tls.Dial("tcp", f.srv.Addr(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	or := bufio.NewReader(old)
	if got := talk(t, old, or, "ms k 1\r\na\r\nmn\r\n", "MN\r\n"); got != "HD\r\n" {
		t.Fatalf("before: %q", got)
	}

	f.ca.WriteFiles(t, filepath.Dir(f.certPath), "server")
	if got := talk(t, old, or, "mg k v\r\nrefresh_certs\r\nrefresh_certs noreply\r\nmn\r\n", "MN\r\n"); got != "VA 1\r\na\r\nOK\r\n" {
		t.Fatalf("refresh_certs on an open connection: %q", got)
	}
	after := serialOf(t, f.srv.Addr(), cfg)
	if after == before {
		t.Fatalf("serial %s before and after refresh_certs", after)
	}
	if got := talk(t, old, or, "mg k v\r\nmn\r\n", "MN\r\n"); got != "VA 1\r\na\r\n" {
		t.Fatalf("the open connection after refresh_certs: %q", got)
	}

	if err := os.WriteFile(f.keyP, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := talk(t, old, or, "refresh_certs noreply\r\nmn\r\n", "MN\r\n")
	if want := "Error loading the key: " + f.keyP + " : "; !strings.HasPrefix(got, want) || strings.Count(got, "\r\n") != 1 {
		t.Fatalf("a broken key: %q, want one line starting %q", got, want)
	}
	if s := serialOf(t, f.srv.Addr(), cfg); s != after {
		t.Fatalf("after a refused refresh the serial is %s, want %s", s, after)
	}

	f.ca.WriteFiles(t, filepath.Dir(f.certPath), "server")
	plain, err := net.Dial("tcp", f.srv.PlainAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if got := talk(t, plain, bufio.NewReader(plain), "refresh_certs\r\nmn\r\n", "MN\r\n"); got != "OK\r\n" {
		t.Fatalf("refresh_certs on the plaintext listener: %q", got)
	}
	if s := serialOf(t, f.srv.Addr(), cfg); s == after {
		t.Fatal("refresh_certs from the plaintext listener left the certificate")
	}
}

// TestRefreshCertsRefused: without TLS the answer is memcached's, even
// with noreply; a region link gets ERROR and reloads nothing.
func TestRefreshCertsRefused(t *testing.T) {
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1}
	srv := proxytest.Start(t, cfg, store, proxytest.Loops(t, cfg), proxy.WithLink("127.0.0.1:0"))
	c, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := talk(t, c, bufio.NewReader(c), "refresh_certs noreply\r\nmn\r\n", "MN\r\n"); got != "Error TLS not enabled\r\n" {
		t.Fatalf("without TLS: %q", got)
	}
	l, err := net.Dial("tcp", srv.LinkAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := talk(t, l, bufio.NewReader(l), "refresh_certs\r\nmn\r\n", "MN\r\n"); got != "ERROR\r\n" {
		t.Fatalf("on a region link: %q", got)
	}
}

// TestRefreshCertsLikeMemcached: strata and memcached -Z read the same
// files and answer the same bytes, up to the library's own words after
// the file's path: OK, noreply, and each file broken in turn.
func TestRefreshCertsLikeMemcached(t *testing.T) {
	// memcached reads the files again as nobody: a directory and files
	// every user can read.
	dir, err := os.MkdirTemp("", "refresh-certs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	ca := tlstest.NewCA(t, "refresh")
	write := func() (caPath, cert, key string) {
		caPath, cert, key = ca.WriteFiles(t, dir, "server")
		for _, p := range []string{dir, caPath, cert, key} {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return caPath, cert, key
	}
	caPath, cert, key := write()
	_, otherCert, _ := tlstest.NewCA(t, "other").WriteFiles(t, t.TempDir(), "server")
	m := memcachedtest.StartTLS(t, nil, cert, key, "-o", "ssl_ca_cert="+caPath)
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	pc := proxy.Config{Listen: "127.0.0.1:0", Loops: 1,
		TLS: tlsconn.Config{Cert: cert, Key: key, CA: caPath, Verify: tlsconn.VerifyRequest}}
	srv := proxytest.Start(t, pc, store, proxytest.Loops(t, pc))

	dial := func(addr string) (net.Conn, *bufio.Reader) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c, bufio.NewReader(c)
	}
	mc, mr := dial(m.Addr)
	sc, sr := dial(srv.Addr())
	// normal cuts an error line after its path: the rest is OpenSSL's or
	// Go's wording.
	normal := func(s string) string {
		var b strings.Builder
		for _, l := range strings.SplitAfter(s, "\r\n") {
			if i := strings.Index(l, " : "); strings.HasPrefix(l, "Error ") && i > 0 {
				l = l[:i+3] + "…\r\n"
			}
			b.WriteString(l)
		}
		return b.String()
	}
	copyFile := func(from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	junk := func(p string) func() {
		return func() {
			if err := os.WriteFile(p, []byte("junk\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name   string
		change func()
		want   string
	}{
		{"same files", func() {}, "OK\r\n"},
		{"new certificate", func() { write() }, "OK\r\n"},
		{"junk key", junk(key), "Error loading the key: " + key + " : …\r\n"},
		{"key of another certificate", func() { write(); copyFile(otherCert, cert) }, "Error loading the key: " + key + " : …\r\n"},
		{"junk certificate", func() { write(); junk(cert)() }, "Error loading the certificate chain: " + cert + " : …\r\n"},
		{"junk CA", func() { write(); junk(caPath)() }, "Error loading the CA certificate: " + caPath + " : …\r\n"},
		{"missing certificate", func() { write(); _ = os.Remove(cert) }, "Error loading the certificate chain: " + cert + " : …\r\n"},
	} {
		c.change()
		const req = "refresh_certs\r\nrefresh_certs noreply\r\nversion\r\n"
		want := c.want
		if want != "OK\r\n" {
			want += want // an error is sent even with noreply
		}
		mg := normal(talk(t, mc, mr, req, "VERSION 1.6.18\r\n"))
		sg := normal(talk(t, sc, sr, req, "VERSION 1.6.18\r\n"))
		if mg != want {
			t.Errorf("%s: memcached answered %q, want %q", c.name, mg, want)
		}
		if sg != want {
			t.Errorf("%s: strata answered %q, memcached %q", c.name, sg, mg)
		}
	}
}
