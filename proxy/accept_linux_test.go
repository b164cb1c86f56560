//go:build linux

package proxy_test

import (
	"bufio"
	"net"
	"regexp"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
)

// TestAcceptedSocketOptions: a client socket the server accepted itself
// (accept_linux.go) has what Go's accept would have given it: Nagle off
// and keep-alive on, with Go's timings. The server runs in this process,
// so the descriptor stats conns names is one the test can ask.
func TestAcceptedSocketOptions(t *testing.T) {
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1}
	srv := proxytest.Start(t, cfg, store, proxytest.Loops(t, cfg))
	c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("stats conns\r\n")); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^STAT (\d+):addr tcp:` + regexp.QuoteMeta(c.LocalAddr().String()) + "\r\n$")
	fd := -1
	r := bufio.NewReader(c)
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stats conns: %v", err)
		}
		if m := line.FindStringSubmatch(l); m != nil {
			fd, _ = strconv.Atoi(m[1])
		}
		if l == "END\r\n" {
			break
		}
	}
	if fd < 0 {
		t.Fatalf("stats conns does not list this client (%s)", c.LocalAddr())
	}
	for _, o := range []struct {
		name       string
		level, opt int
		want       int
	}{
		{"TCP_NODELAY", unix.IPPROTO_TCP, unix.TCP_NODELAY, 1},
		{"SO_KEEPALIVE", unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE", unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 15},
		{"TCP_KEEPINTVL", unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 15},
		{"TCP_KEEPCNT", unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 9},
	} {
		got, err := unix.GetsockoptInt(fd, o.level, o.opt)
		if err != nil {
			t.Fatalf("%s on descriptor %d: %v", o.name, fd, err)
		}
		if got != o.want {
			t.Errorf("%s = %d, want %d", o.name, got, o.want)
		}
	}
}
