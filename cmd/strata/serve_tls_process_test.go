package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
	"github.com/strata-cache/strata/internal/tlstest"
)

// pymemcacheTLS runs pymemcache with a TLS context against addr: the
// calls an application makes, each checked.
const pymemcacheTLS = `
import ssl, sys
from pymemcache.client.base import Client
host, port = sys.argv[1].rsplit(":", 1)
ctx = ssl.create_default_context(cafile=sys.argv[2])
c = Client((host, int(port)), tls_context=ctx, connect_timeout=5, timeout=5)
assert c.set("py:k", b"v" * 100)
assert c.get("py:k") == b"v" * 100, c.get("py:k")
c.set_many({"py:a": b"1", "py:b": b"2"})
assert c.get_many(["py:a", "py:b", "py:none"]) == {"py:a": b"1", "py:b": b"2"}
assert c.add("py:a", b"x") is False or c.get("py:a") == b"1"
assert c.incr("py:a", 5) == 6
assert c.delete("py:b")
assert c.get("py:b") is None
assert c.version()
print("ok", ssl.OPENSSL_VERSION)
`

// A strata process serving TLS: pymemcache works through a TLS context;
// the certificate files replaced and SIGHUP sent under load lose no
// request and new connections present the new serial; a broken file and
// SIGHUP keep the certificate in force, with a log line saying so.
func TestTLSProcessRotationAndPymemcache(t *testing.T) {
	bin := testbin.BuildStrata(t)
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "strata-process")
	caPath, certPath, keyPath := ca.WriteFiles(t, dir, "server")
	cfg := writeFile(t, "strata.toml", fmt.Sprintf("[tls]\ncert = %q\nkey = %q\n", certPath, keyPath))
	p := startProcess(t, bin, cfg)

	out, err := exec.Command("/usr/bin/python3", "-c", pymemcacheTLS, p.listen, caPath).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok") {
		t.Fatalf("pymemcache over TLS: %v\n%s", err, out)
	}
	t.Logf("pymemcache: %s", strings.TrimSpace(string(out)))

	client := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}
	serial := func() string {
		tc, err := tls.Dial("tcp", p.listen, client)
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		return tc.ConnectionState().PeerCertificates[0].SerialNumber.Text(16)
	}
	before := serial()

	var stop atomic.Bool
	var ok, failed atomic.Int64
	var last atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tc, err := tls.Dial("tcp", p.listen, client)
			if err != nil {
				failed.Add(1)
				last.Store(err.Error())
				return
			}
			defer tc.Close()
			r := bufio.NewReader(tc)
			for i := 0; !stop.Load(); i++ {
				_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
				fmt.Fprintf(tc, "set w%d 0 0 1\r\n%d\r\nget w%d\r\n", w, i%10, w)
				var got strings.Builder
				for j := 0; j < 4; j++ {
					l, err := r.ReadString('\n')
					if err != nil {
						break
					}
					got.WriteString(l)
				}
				if want := fmt.Sprintf("STORED\r\nVALUE w%d 0 1\r\n%d\r\nEND\r\n", w, i%10); got.String() != want {
					failed.Add(1)
					last.Store(got.String())
					return
				}
				ok.Add(1)
			}
		}(w)
	}
	progress := func(n int64) {
		start := ok.Load()
		poll.Until(t, 10*time.Second, "requests under load", func() bool { return ok.Load() >= start+n || failed.Load() > 0 })
	}
	progress(100)
	ca.WriteFiles(t, dir, "server")
	p.signal(t, syscall.SIGHUP)
	var after string
	poll.Until(t, 10*time.Second, "new connections to present the new certificate", func() bool {
		after = serial()
		return after != before
	})
	progress(100)

	if err := os.WriteFile(filepath.Join(dir, "server.key"), []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p.signal(t, syscall.SIGHUP)
	poll.Until(t, 10*time.Second, "the broken key to be refused in the log", func() bool {
		return strings.Contains(p.stderr.String(), "TLS files refused")
	})
	if got := serial(); got != after {
		t.Fatalf("after a refused reload the serial is %s, want %s kept", got, after)
	}
	progress(100)
	stop.Store(true)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d requests failed across the rotation (last: %v)", n, last.Load())
	}
	t.Logf("%d requests on open connections across two SIGHUPs, none failed", ok.Load())
	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit status %d\n%s", code, p.stderr.String())
	}
}
