package proxy_test

import (
	"bytes"
	"net"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
)

// idleConnHeapMax bounds the live Go heap an idle client connection costs
// the process once it has had one reply. Measured 468 bytes: gnet's
// connection (240) with the peer's sockaddr accept4 returned (32), its
// event callback (16) and its connection map (about 40); strata's conn (96)
// and its entry in the loop's set (about 40). What a connection needs only
// while a request is in flight (its parser, queue, reply buffer, slots,
// ordering counts) belongs to the loop, and is not part of the figure.
// Accepting through Go's net.Conn instead of accept4 would add the two
// addresses Go makes and gnet keeps (about 190 bytes), past the bound.
const idleConnHeapMax = 540

// TestIdleConnHeap opens connections that each send one get and go quiet,
// and measures the live heap they cost. The clients are raw sockets, so
// the process's heap growth is the server's alone.
func TestIdleConnHeap(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation sizes")
	}
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 2}
	srv := proxytest.Start(t, cfg, store, proxytest.Loops(t, cfg))
	addr, err := net.ResolveTCPAddr("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	var fds []int
	defer func() {
		for _, fd := range fds {
			_ = syscall.Close(fd)
		}
	}()
	open := func(n int) {
		for i := 0; i < n; i++ {
			fd, err := rawGet(addr)
			if err != nil {
				t.Fatalf("connection %d: %v", len(fds)+1, err)
			}
			fds = append(fds, fd)
		}
	}
	open(64) // both loops registered, their pools warm
	const n = 2000
	before := heapAlloc()
	open(n)
	after := heapAlloc()
	per := float64(int64(after)-int64(before)) / n
	t.Logf("%.0f bytes of live heap per idle connection (bound %d)", per, idleConnHeapMax)
	if per > idleConnHeapMax {
		t.Errorf("an idle connection costs %.0f bytes of heap, want at most %d", per, idleConnHeapMax)
	}
	if got := srv.Counters().ConnsCurrent; got != int64(len(fds)) {
		t.Fatalf("%d connections open, want %d", got, len(fds))
	}
}

// heapAlloc is the bytes of live objects after a full collection.
func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC() // the first may leave finalizer-held objects for the second
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// rawGet connects to addr with a bare socket (no Go heap on the client
// side), sends a get of a missing key and reads its END.
func rawGet(addr *net.TCPAddr) (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	sa := &syscall.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	tv := syscall.Timeval{Sec: 5}
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	if err := syscall.Connect(fd, sa); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	if _, err := syscall.Write(fd, []byte("get idle\r\n")); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	var buf [16]byte
	got := 0
	for got < len("END\r\n") {
		k, err := syscall.Read(fd, buf[got:])
		if err != nil || k <= 0 {
			_ = syscall.Close(fd)
			return -1, &net.OpError{Op: "read", Err: err}
		}
		got += k
	}
	if !bytes.Equal(buf[:got], []byte("END\r\n")) {
		_ = syscall.Close(fd)
		return -1, &net.OpError{Op: "read", Err: syscall.EPROTO, Source: nil, Addr: nil,
			Net: "reply " + strconv.Quote(string(buf[:got]))}
	}
	return fd, nil
}

// TestStatsConnsAcrossLoops: stats conns, answered on one loop, lists the
// client connections of every loop by their remote address, and drops a
// connection once it closed.
func TestStatsConnsAcrossLoops(t *testing.T) {
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 2}
	srv := proxytest.Start(t, cfg, store, proxytest.Loops(t, cfg))
	var clients []net.Conn
	for range 4 {
		c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	listed := func() string {
		t.Helper()
		c := clients[0]
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("stats conns\r\n")); err != nil {
			t.Fatal(err)
		}
		var got []byte
		buf := make([]byte, 4096)
		for !bytes.HasSuffix(got, []byte("END\r\n")) {
			n, err := c.Read(buf)
			if err != nil {
				t.Fatalf("stats conns: %q, %v", got, err)
			}
			got = append(got, buf[:n]...)
		}
		return string(got)
	}
	all := func(out string) bool {
		for _, c := range clients {
			if !strings.Contains(out, "addr tcp:"+c.LocalAddr().String()+"\r\n") {
				return false
			}
		}
		return true
	}
	// A connection is listed once its loop opened it, which the dial does
	// not wait for.
	deadline := time.Now().Add(5 * time.Second)
	out := listed()
	for !all(out) {
		if time.Now().After(deadline) {
			t.Fatalf("stats conns lacks some of the 4 clients:\n%s", out)
		}
		out = listed()
	}
	gone := clients[3].LocalAddr().String()
	clients[3].Close()
	deadline = time.Now().Add(5 * time.Second)
	for strings.Contains(out, gone) {
		if time.Now().After(deadline) {
			t.Fatalf("stats conns still lists the closed %s:\n%s", gone, out)
		}
		out = listed()
	}
}
