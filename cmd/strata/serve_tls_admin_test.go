package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/tlstest"
)

// A strata with client TLS, the admin API over HTTPS and a pool over TLS
// to memcached -Z: /metrics answers over HTTPS with the client and
// backend handshakes counted; refresh_certs reloads the files, and the
// admin listener presents the new certificate as the memcached one does.
func TestAdminHTTPSAndRefreshCerts(t *testing.T) {
	ca := tlstest.NewCA(t, "app")
	dir := t.TempDir()
	caPath, cert, key := ca.WriteFiles(t, dir, "server")
	_, mcert, mkey := ca.WriteFiles(t, t.TempDir(), "memcached")
	m := memcachedtest.StartTLS(t, nil, mcert, mkey)
	ta := startApp(t, fmt.Sprintf("[server]\nlisten_plain = \"127.0.0.1:0\"\n[tls]\ncert = %q\nkey = %q\n[admin]\ntls = true\n[l2]\nservers = [%q]\ntls = true\nca = %q\n",
		cert, key, m.Addr, caPath))
	c := mctext.Dial(t, ta.proxy.PlainAddr())
	c.Set("k", "v", 0)
	if v, ok := c.Get("k"); !ok || v != "v" {
		t.Fatalf("through the TLS pool: %q %v", v, ok)
	}

	trust := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: trust}}
	resp, err := hc.Get("https://" + ta.admin.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	for _, side := range []string{"client", "backend"} {
		m := regexp.MustCompile(`strata_tls_handshakes_total\{side="` + side + `"\} (\d+)`).FindSubmatch(body)
		if m == nil {
			t.Fatalf("no %s handshakes in /metrics:\n%s", side, body)
		}
		if n, _ := strconv.Atoi(string(m[1])); side == "backend" && n == 0 {
			t.Fatalf("%s handshakes: %s", side, m[1])
		}
	}

	presented := func() string {
		tc, err := tls.Dial("tcp", ta.admin.Addr(), trust)
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		return tc.ConnectionState().PeerCertificates[0].SerialNumber.Text(16)
	}
	before := presented()
	ca.WriteFiles(t, filepath.Dir(cert), "server")
	if got := c.Line("refresh_certs\r\n"); got != "OK" {
		t.Fatalf("refresh_certs: %q", got)
	}
	if after := presented(); after == before {
		t.Fatalf("the admin listener presents %s before and after refresh_certs", after)
	}
}
