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
	"github.com/strata-cache/strata/proxy/proxytest"
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
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 2}
	srv := proxytest.Start(t, cfg, linkEcho{}, proxytest.Loops(t, cfg), proxy.WithLink("127.0.0.1:0"))
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
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1}
	srv, err := proxy.New(cfg, linkEcho{}, proxytest.Loops(t, cfg), proxy.WithLink("127.0.0.1:0"))
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
	cfg := proxy.Config{Listen: "127.0.0.1:0"}
	if _, err := proxy.New(cfg, linkEcho{}, proxytest.Loops(t, cfg), proxy.WithLink("nonsense")); err == nil {
		t.Fatal("a link address without a port was accepted")
	}
}

// parkGets orders μ-shard-like requests as the locality router does
// (source requests take no phase, other reads 1, writes exclusive) and
// keeps every get that is not a source read until the test completes it.
type parkGets struct {
	parked chan *tiers.Op
	seen   chan string // the kind and source mark of each other request
}

func (p parkGets) Phase(r *tiers.Request) uint8 {
	switch {
	case r.LinkSource:
		return 0
	case r.Kind == tiers.KindGet:
		return 1
	}
	return tiers.PhaseExclusive
}

func (p parkGets) Do(op *tiers.Op) {
	if op.Req.Kind == tiers.KindGet && !op.Req.LinkSource {
		p.parked <- op
		return
	}
	p.seen <- fmt.Sprintf("kind=%d src=%v", op.Req.Kind, op.Req.LinkSource)
	op.Res.Status = tiers.StatusNotFound
	op.Done(op)
}

type idleUser struct{}

func (idleUser) Start()        {}
func (idleUser) FlushLoop(int) {}

// TestLinkSourceRequestIsNotHeld: a source delete on a link connection is
// ordered by the phase the tier gives a source request, not the one of a
// client's delete: it reaches the tier while a forwarded get of its key
// is still unanswered. (Held, the connection's requests waited behind
// that get, which may itself wait on the sender's region.)
func TestLinkSourceRequestIsNotHeld(t *testing.T) {
	tier := parkGets{parked: make(chan *tiers.Op, 1), seen: make(chan string, 1)}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1}
	loops := proxytest.Loops(t, cfg)
	if err := loops.Join(idleUser{}); err != nil { // a tier that may answer after Do
		t.Fatal(err)
	}
	srv := proxytest.Start(t, cfg, tier, loops, proxy.WithLink("127.0.0.1:0"))
	link, err := net.Dial("tcp", srv.LinkAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	_ = link.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(link, "mg k v Oe1\r\n"); err != nil {
		t.Fatal(err)
	}
	var get *tiers.Op
	select {
	case get = <-tier.parked:
	case <-time.After(10 * time.Second):
		t.Fatal("the forwarded get did not reach the tier")
	}
	if _, err := io.WriteString(link, "md k Osrc\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-tier.seen:
		if want := fmt.Sprintf("kind=%d src=true", tiers.KindDelete); got != want {
			t.Fatalf("the tier saw %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the source delete was held behind the forwarded get")
	}
	srv.RunOnLoop(get.Loop, func() {
		get.Res.Status = tiers.StatusMiss
		get.Done(get)
	})
	// Replies keep request order: the get's miss, then the delete's.
	r := bufio.NewReader(link)
	for _, want := range []string{"EN Oe1\r\n", "NF Osrc\r\n"} {
		line, err := r.ReadString('\n')
		if err != nil || line != want {
			t.Fatalf("reply %q %v, want %q", line, err, want)
		}
	}
}
