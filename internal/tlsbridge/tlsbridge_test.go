package tlsbridge_test

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/tlsbridge"
	"github.com/strata-cache/strata/internal/tlstest"
)

// TestBridgeCarriesBothWaysAndCloses: what the TLS peer sends comes out of
// the plaintext end and back; the peer's EOF reaches the plaintext end;
// Close ends a bridge whose plaintext end is still open, and Wrap fails
// after it.
func TestBridgeCarriesBothWaysAndCloses(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	serverCfg, clientCfg := ca.Mutual(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", serverCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var b tlsbridge.Bridge
	plain := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p, err := b.Wrap(c.(*tls.Conn))
			if err != nil {
				return
			}
			plain <- p
		}
	}()
	dial := func() *tls.Conn {
		c, err := tls.Dial("tcp", ln.Addr().String(), clientCfg)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		return c
	}
	c := dial()
	p := <-plain
	_ = p.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(p).ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("plaintext end read %q %v", line, err)
	}
	if _, err := io.WriteString(p, "pong\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "pong\n" {
		t.Fatalf("TLS peer read %q %v", line, err)
	}
	_ = c.CloseWrite()
	if rest, err := io.ReadAll(p); err != nil || len(rest) != 0 {
		t.Fatalf("after the peer's EOF: %q %v", rest, err)
	}
	p.Close()

	c2 := dial()
	defer c2.Close()
	p2 := <-plain
	defer p2.Close()
	done := make(chan struct{})
	go func() { b.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the pumps")
	}
	if _, err := c2.Read(make([]byte, 1)); err == nil {
		t.Fatal("the TLS connection survived Close")
	}
	c3, s3 := net.Pipe()
	defer c3.Close()
	if _, err := b.Wrap(tls.Server(s3, serverCfg)); !errors.Is(err, tlsbridge.ErrClosed) {
		t.Fatalf("Wrap after Close: %v", err)
	}
}
