package proxy_test

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/internal/tlstest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
)

// TestLinkTLSCounted: the link listener's handshakes are counted on their
// own, a peer without a certificate as bad_client_cert; the client
// listener's counts do not see them.
func TestLinkTLSCounted(t *testing.T) {
	ca := tlstest.NewCA(t, "links")
	server, client := ca.Mutual(t)
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1}
	srv := proxytest.Start(t, cfg, linkEcho{}, proxytest.Loops(t, cfg), proxy.WithLink("127.0.0.1:0"), proxy.WithLinkTLS(server))
	if _, ok := srv.TLSStats(); ok {
		t.Fatal("client-listener TLS stats without client TLS")
	}
	good, err := tls.Dial("tcp", srv.LinkAddr(), client)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	nc, err := net.Dial("tcp", srv.LinkAddr())
	if err != nil {
		t.Fatal(err)
	}
	bad := tls.Client(nc, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost", MinVersion: tls.VersionTLS13})
	_ = bad.SetDeadline(time.Now().Add(10 * time.Second))
	// TLS 1.3: the server's refusal of the missing certificate arrives
	// with the first read.
	_ = bad.Handshake()
	_, _ = bad.Read(make([]byte, 1))
	_ = bad.Close()
	poll.Until(t, 10*time.Second, "two link handshakes counted", func() bool {
		h, ok := srv.LinkTLSHandshakes()
		return ok && h.Handshakes == 2 && h.Errors[tlsconn.ReasonBadClientCert] == 1
	})
}
