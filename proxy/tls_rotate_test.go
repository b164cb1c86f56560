package proxy_test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/tlsconn"
)

// TestTLSRotation: the certificate files are replaced and reloaded while
// clients run requests on open connections and open new ones: no request
// fails, open connections stay, new handshakes present the new serial.
// A broken key file is then refused whole and the certificate in force
// stays.
func TestTLSRotation(t *testing.T) {
	f := startTLS(t, tlsconn.VerifyNone, 0)
	cfg := f.clientConfig(t, false)
	before := serialOf(t, f.srv.Addr(), cfg)

	var stop atomic.Bool
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	var failure atomic.Value
	fail := func(err error) {
		failed.Add(1)
		failure.Store(err.Error())
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) { // one connection for the whole test
			defer wg.Done()
			tc, err := tls.Dial("tcp", f.srv.Addr(), cfg)
			if err != nil {
				fail(err)
				return
			}
			defer tc.Close()
			r := bufio.NewReader(tc)
			for i := 0; !stop.Load(); i++ {
				_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
				fmt.Fprintf(tc, "ms w%d 4 T0\r\n%04d\r\nmg w%d v\r\n", w, i%10000, w)
				a, err1 := r.ReadString('\n')
				b, err2 := r.ReadString('\n')
				c, err3 := r.ReadString('\n')
				if err1 != nil || err2 != nil || err3 != nil || a != "HD\r\n" || b != "VA 4\r\n" || c != fmt.Sprintf("%04d\r\n", i%10000) {
					fail(fmt.Errorf("worker %d: %q %q %q %v %v %v", w, a, b, c, err1, err2, err3))
					return
				}
				ok.Add(1)
			}
		}(w)
	}
	wg.Add(1)
	go func() { // a new connection per request
		defer wg.Done()
		for !stop.Load() {
			tc, err := tls.Dial("tcp", f.srv.Addr(), cfg)
			if err != nil {
				fail(err)
				return
			}
			_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(tc, "mn\r\n")
			if l, err := bufio.NewReader(tc).ReadString('\n'); err != nil || l != "MN\r\n" {
				fail(fmt.Errorf("new connection: %q %v", l, err))
			} else {
				ok.Add(1)
			}
			_ = tc.Close()
		}
	}()
	waitOK := func(n int64) {
		start := ok.Load()
		poll.Until(t, 10*time.Second, "requests to succeed", func() bool { return ok.Load() >= start+n || failed.Load() > 0 })
	}
	waitOK(200)
	dir := filepath.Dir(f.certPath)
	f.ca.WriteFiles(t, dir, "server") // a new certificate and key, same paths
	if err := f.srv.ReloadTLS(); err != nil {
		t.Fatal(err)
	}
	waitOK(200)
	after := serialOf(t, f.srv.Addr(), cfg)
	if after == before {
		t.Fatalf("serial %s before and after the reload", after)
	}
	if st, _ := f.srv.TLSStats(); st.Serial != after {
		t.Fatalf("stats serial %s, presented %s", st.Serial, after)
	}

	if err := os.WriteFile(f.keyP, []byte("-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.ReloadTLS(); err == nil {
		t.Fatal("a broken key was accepted")
	}
	waitOK(100)
	if got := serialOf(t, f.srv.Addr(), cfg); got != after {
		t.Fatalf("after a refused reload the serial is %s, want %s", got, after)
	}
	stop.Store(true)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d requests failed across the rotation (last: %v); %d succeeded", n, failure.Load(), ok.Load())
	}
	t.Logf("%d requests across two reloads, none failed", ok.Load())
}
