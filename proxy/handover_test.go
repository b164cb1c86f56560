package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
)

// A server started on a socket another holder shares (a successor, after a
// handoff) serves on it, and its drain closes only its own copy: the
// socket goes on accepting for the other holder.
func TestStartOnASharedSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	other, err := net.FileListener(f)
	_ = f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:1", Loops: 1} // not bound: the given socket is used
	srv, err := proxy.New(cfg, store, proxytest.Loops(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.StartOn(ln, nil, nil); err != nil {
		t.Fatal(err)
	}
	if cl, _, _ := srv.Listeners(); cl != ln || srv.Addr() != ln.Addr().String() {
		t.Fatalf("serving on %v (%s), given %v", cl, srv.Addr(), ln.Addr())
	}
	c := dial(t, srv.Addr())
	fmt.Fprintf(c, "version\r\n")
	if l, err := bufio.NewReader(c).ReadString('\n'); err != nil || l[:7] != "VERSION" {
		t.Fatalf("version: %q %v", l, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	accepted := make(chan error, 1)
	go func() {
		c, err := other.Accept()
		if err == nil {
			_ = c.Close()
		}
		accepted <- err
	}()
	c2, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatalf("after the drain the shared socket refused: %v", err)
	}
	_ = c2.Close()
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
}
