package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers"
)

// linkEcho answers every get with what the proxy told it about the
// request's link: "link=<bool> epoch=<n> src=<bool>".
type linkEcho struct{ tiers.NoPhase }

func (linkEcho) Do(op *tiers.Op) {
	r := &op.Req
	op.Res.Status = tiers.StatusHit
	op.Res.Value = fmt.Appendf(op.Res.Value[:0], "link=%v epoch=%d src=%v", r.Link, r.LinkEpoch, r.LinkSource)
	op.Done(op)
}

func startWithLink(t *testing.T) *proxy.Server {
	t.Helper()
	srv, err := proxy.New(proxy.Config{Listen: "127.0.0.1:0", Loops: 2}, linkEcho{}, proxy.WithLink("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return srv
}

// exchange sends req and reads n reply lines.
func exchange(t *testing.T, c net.Conn, r *bufio.Reader, req string, n int) string {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%q: %v after %q", req, err, b.String())
		}
		b.WriteString(line)
	}
	return b.String()
}

// TestLinkListenerMarksRequests: requests on the link listener reach the
// tier marked, with the epoch or source marker of their opaque token
// (which is echoed, as memcached does); the same bytes on the client
// listener are plain requests.
func TestLinkListenerMarksRequests(t *testing.T) {
	srv := startWithLink(t)
	if srv.LinkAddr() == "" || srv.LinkAddr() == srv.Addr() || strings.HasSuffix(srv.LinkAddr(), ":0") {
		t.Fatalf("link address %q, client address %q", srv.LinkAddr(), srv.Addr())
	}
	link, err := net.Dial("tcp", srv.LinkAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	lr := bufio.NewReader(link)
	cases := []struct{ req, opaque, value string }{
		{"mg k v Oe17\r\n", " Oe17", "link=true epoch=17 src=false"},
		{"mg k v Osrc\r\n", " Osrc", "link=true epoch=0 src=true"},
		{"mg k v O123\r\n", " O123", "link=true epoch=0 src=false"},
		{"mg k v\r\n", "", "link=true epoch=0 src=false"},
	}
	for _, c := range cases {
		want := fmt.Sprintf("VA %d%s\r\n%s\r\n", len(c.value), c.opaque, c.value)
		if got := exchange(t, link, lr, c.req, 2); got != want {
			t.Errorf("link %q: got %q, want %q", c.req, got, want)
		}
	}
	if got := exchange(t, link, lr, "get k\r\n", 3); got != "VALUE k 0 27\r\nlink=true epoch=0 src=false\r\nEND\r\n" {
		t.Errorf("link text get: %q", got)
	}
	cl, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := exchange(t, cl, bufio.NewReader(cl), "mg k v Oe17\r\n", 2); got != "VA 28 Oe17\r\nlink=false epoch=0 src=false\r\n" {
		t.Errorf("client listener: %q", got)
	}
}

// TestLinkListenerStops: Stop closes the link listener too.
func TestLinkListenerStops(t *testing.T) {
	srv, err := proxy.New(proxy.Config{Listen: "127.0.0.1:0", Loops: 1}, linkEcho{}, proxy.WithLink("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	addr := srv.LinkAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("the link listener %s still accepts after Stop", addr)
	}
}

func TestLinkAddressIsChecked(t *testing.T) {
	if _, err := proxy.New(proxy.Config{Listen: "127.0.0.1:0"}, linkEcho{}, proxy.WithLink("nonsense")); err == nil {
		t.Fatal("a link address without a port was accepted")
	}
}
