package locality_test

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/tlstest"
)

// TestLinkMutualTLS: with mutual TLS on the links, forwarding works as
// before; a plain connection to a link, or one whose certificate comes
// from another CA, is never served.
func TestLinkMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "regions")
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}, tls: ca})
	w.create(t, "u: 8", "a")
	a, b := w.client(t, "a"), w.client(t, "b")
	if got := b.Set("u:{8}", "over tls", 0); got != "STORED" {
		t.Fatalf("forwarded set: %q", got)
	}
	mustGet(t, a, "u:{8}", "over tls")
	mustGet(t, b, "u:{8}", "over tls")
	if s := w.regions["b"].tier.Stats(); s.Forwarded != 2 {
		t.Fatalf("%+v", s)
	}
	linkAddr := w.regions["a"].srv.LinkAddr()

	// Plain text: the handshake fails, the request is never answered.
	pc, err := net.Dial("tcp", linkAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	_ = pc.SetDeadline(time.Now().Add(15 * time.Second))
	_, _ = io.WriteString(pc, "mg u:{8} v\r\n")
	if buf, err := io.ReadAll(pc); len(buf) > 0 && string(buf[:2]) == "VA" {
		t.Fatalf("a plain client was served: %q %v", buf, err)
	}

	// A certificate of another CA: refused during the handshake.
	other := tlstest.NewCA(t, "strangers")
	_, client := other.Mutual(t)
	client.RootCAs = ca.Pool // it trusts a; a must not trust it
	tc, err := tls.Dial("tcp", linkAddr, client)
	if err == nil {
		_ = tc.SetDeadline(time.Now().Add(15 * time.Second))
		_, _ = io.WriteString(tc, "mg u:{8} v\r\n")
		buf := make([]byte, 16)
		n, rerr := tc.Read(buf)
		tc.Close()
		if n > 0 {
			t.Fatalf("a client of another CA was served: %q", buf[:n])
		}
		if rerr == nil {
			t.Fatal("no error for a client of another CA")
		}
	}
}
