package link_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
)

// viaLink is a tier that forwards everything to peer 0 with epoch 5, so a
// client of the proxy drives the link client on the proxy's loops.
type viaLink struct {
	tiers.NoPhase
	c *link.Client
}

func (v viaLink) Do(op *tiers.Op) { v.c.Send(0, op, linkproto.Token{Epoch: 5}) }

// peer is a scripted region link: it answers each request line it reads
// with answer(line); "" answers nothing.
func peer(t *testing.T, answer func(line string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if a := answer(line); a != "" {
						if _, err := io.WriteString(c, a); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func start(t *testing.T, cfg link.Config) (*link.Client, *bufio.Reader, net.Conn) {
	t.Helper()
	pcfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1}
	loops := proxytest.Loops(t, pcfg)
	lc, err := link.New(cfg, loops)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lc.Close() }) // after the server stopped
	srv := proxytest.Start(t, pcfg, viaLink{c: lc}, loops)
	c, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return lc, bufio.NewReader(c), c
}

func lines(t *testing.T, r *bufio.Reader, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", b.String(), err)
		}
		b.WriteString(l)
	}
	return b.String()
}

// TestPipelinedRepliesPairInOrder: requests leave with the epoch token,
// replies pair first in, first out, and a wrong-owner refusal reaches the
// sender as ErrWrongOwner (spelt again by the proxy).
func TestPipelinedRepliesPairInOrder(t *testing.T) {
	addr := peer(t, func(line string) string {
		switch {
		case !strings.HasSuffix(line, " Oe5\r\n"):
			return "CLIENT_ERROR no token\r\n"
		case strings.HasPrefix(line, "mg a "):
			return "VA 1 Oe5\r\nA\r\n"
		case strings.HasPrefix(line, "mg b "):
			return "EN Oe5\r\n"
		default:
			return "SERVER_ERROR wrong_owner\r\n"
		}
	})
	lc, r, c := start(t, link.Config{Peers: map[string]string{"x": addr}})
	io.WriteString(c, "get a\r\nget b\r\nget c\r\nget a\r\n")
	want := "VALUE a 0 1\r\nA\r\nEND\r\nEND\r\nSERVER_ERROR wrong_owner\r\nVALUE a 0 1\r\nA\r\nEND\r\n"
	if got := lines(t, r, 8); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if s := lc.Stats(); s.Requests != 4 || s.WrongOwner != 1 || s.BytesOut == 0 || s.BytesIn == 0 {
		t.Fatalf("%+v", s)
	}
}

// TestSilentPeerTimesOut: a peer that never answers fails the request
// after the timeout; with MaxPending 1, a second request queued behind it
// fails at once.
func TestSilentPeerTimesOut(t *testing.T) {
	addr := peer(t, func(string) string { return "" })
	lc, r, c := start(t, link.Config{Peers: map[string]string{"x": addr}, Timeout: 200 * time.Millisecond, MaxPending: 1})
	begin := time.Now()
	io.WriteString(c, "get a\r\nget b\r\n")
	got := lines(t, r, 2)
	if !strings.Contains(got, "timed out") || !strings.Contains(got, "too many requests") {
		t.Fatalf("%q", got)
	}
	// A request is stamped with the client clock of the last tick, a tenth
	// of the timeout apart, or further when the scheduler starves the
	// ticker (CI with -race on two cores saw 22 ms): the timeout may fire
	// early by that lag, so the bound is half the timeout, which a
	// timeout that is not timed at all still fails.
	if el := time.Since(begin); el < 100*time.Millisecond {
		t.Fatalf("failed after %v, before half the timeout", el)
	}
	if s := lc.Stats(); s.Timeouts != 1 || s.Errors != 2 {
		t.Fatalf("%+v", s)
	}
}

// TestGarbageResetsTheConnection: a reply that is not the meta protocol
// fails the request and drops the connection; the next request dials
// again.
func TestGarbageResetsTheConnection(t *testing.T) {
	var n atomic.Int32
	addr := peer(t, func(string) string {
		if n.Add(1) == 1 {
			return "HELLO\r\n"
		}
		return "EN\r\n"
	})
	_, r, c := start(t, link.Config{Peers: map[string]string{"x": addr}})
	io.WriteString(c, "get a\r\n")
	if got := lines(t, r, 1); !strings.HasPrefix(got, "SERVER_ERROR") {
		t.Fatalf("%q", got)
	}
	io.WriteString(c, "get a\r\n")
	if got := lines(t, r, 1); got != "END\r\n" {
		t.Fatalf("after the reset: %q", got)
	}
}

// TestUnreachablePeerFailsFast: nothing listens; requests fail with an
// error wrapping ErrUnreachable, and during the back-off without a dial.
func TestUnreachablePeerFailsFast(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, r, c := start(t, link.Config{Peers: map[string]string{"x": addr}})
	for i := 0; i < 3; i++ {
		io.WriteString(c, "get a\r\n")
		if got := lines(t, r, 1); !strings.Contains(got, "unreachable") {
			t.Fatalf("request %d: %q", i, got)
		}
	}
	if !errors.Is(link.ErrTimeout, link.ErrUnreachable) || !errors.Is(link.ErrBacklog, link.ErrUnreachable) {
		t.Fatal("the failures must read as unreachable")
	}
}

func TestConfigRejects(t *testing.T) {
	for _, cfg := range []link.Config{
		{Peers: map[string]string{"": "127.0.0.1:1"}},
		{Peers: map[string]string{"x": "nowhere"}},
		{Timeout: time.Nanosecond},
		{MaxPending: -1},
	} {
		if _, err := link.New(cfg, proxytest.Loops(t, proxy.Config{})); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	if _, err := link.New(link.Config{}, nil); err == nil {
		t.Error("a client without loops accepted")
	}
}
