package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
)

// These tests abuse one connection the way a broken or hostile client
// would, on a server with a single event loop, so every other client
// shares that loop with the abuser.

const bigValue = 100 << 10 // bytes of the value the abusers fetch

// startOneLoop starts a server with one event loop over an embedded store
// holding key "big" (bigValue bytes) and "small", on a port the kernel
// picks.
func startOneLoop(t *testing.T, maxOut int) *proxy.Server {
	t.Helper()
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1, MaxOutboundBytes: maxOut}
	srv, err := proxy.New(cfg, store, proxytest.Loops(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	c := dial(t, srv.Addr())
	fmt.Fprintf(c, "set big 0 0 %d\r\n%s\r\nset small 0 0 5\r\nhello\r\n", bigValue, strings.Repeat("v", bigValue))
	r := bufio.NewReader(c)
	for i := 0; i < 2; i++ {
		if l, err := r.ReadString('\n'); err != nil || l != "STORED\r\n" {
			t.Fatalf("set: %q %v", l, err)
		}
	}
	_ = c.Close()
	return srv
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// abuse opens a connection that sends n pipelined gets of the big value in
// one write and never reads. With small set, its receive buffer is made
// small, so the kernel holds little of what the server sends (and a later
// read is slow: a 4 KiB window).
func abuse(t *testing.T, addr string, n int, small bool) net.Conn {
	t.Helper()
	c := dial(t, addr)
	if small {
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
	}
	burst := bytes.Repeat([]byte("get big\r\n"), n)
	go func() { _, _ = c.Write(burst) }() // blocks once the server stops reading
	return c
}

// served checks that a well-behaved client gets answers, each within a
// generous deadline: a wedged loop never answers at all.
func served(t *testing.T, addr string, rounds int) {
	t.Helper()
	c := dial(t, addr)
	r := bufio.NewReader(c)
	want := "VALUE small 0 5\r\nhello\r\nEND\r\n"
	got := make([]byte, len(want))
	for i := 0; i < rounds; i++ {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write([]byte("get small\r\n")); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
			t.Fatalf("round %d: a client sharing the loop with an abuser got %q, %v", i, got, err)
		}
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// Before the byte bound, one read of 2,000 gets buffered max_inflight
// (1,024) replies of 100 KiB: about 100 MiB for one connection; and the
// loop, waking the paused connection in a storm, answered nobody else.
func TestNonReadingClientIsBoundedAndOthersAreServed(t *testing.T) {
	const maxOut = 256 << 10
	srv := startOneLoop(t, maxOut)
	base := liveHeap()
	const abusers = 4
	for i := 0; i < abusers; i++ {
		abuse(t, srv.Addr(), 2000, true)
	}
	// The abusers are parsed until their bound; then the loop must keep
	// serving the others.
	poll.Until(t, 20*time.Second, "abusers connected", func() bool { return srv.Counters().ConnsCurrent >= abusers })
	served(t, srv.Addr(), 200)
	// Each abuser may hold its bound plus one reply in strata's buffers,
	// plus what its unparsed requests take (18 KB). Allow twice that.
	grown := int64(liveHeap()) - int64(base)
	limit := int64(abusers * 2 * (maxOut + bigValue + 32<<10))
	t.Logf("heap grew by %d KiB for %d non-reading clients (limit %d KiB)", grown>>10, abusers, limit>>10)
	if grown > limit {
		t.Errorf("heap grew by %d KiB for %d non-reading clients, want at most %d KiB", grown>>10, abusers, limit>>10)
	}
}

// Before, a client that hung up while its replies were over the bound
// stayed open on the server.
func TestClientHangingUpMidBurstIsReleased(t *testing.T) {
	srv := startOneLoop(t, 256<<10)
	base := liveHeap()
	a := abuse(t, srv.Addr(), 2000, true)
	poll.Until(t, 20*time.Second, "abuser connected", func() bool { return srv.Counters().ConnsCurrent == 1 })
	served(t, srv.Addr(), 10) // the abuser is past its bound by now
	_ = a.Close()
	poll.Until(t, 20*time.Second, "connections released", func() bool { return srv.Counters().ConnsCurrent == 1 })
	served(t, srv.Addr(), 10)
	if grown := int64(liveHeap()) - int64(base); grown > 4<<20 {
		t.Errorf("heap still %d KiB above the start after the abuser left", grown>>10)
	}
}

// Before, a reader that paused past the bound got the first 4 MiB and
// then nothing: the paused connection was never parsed again.
func TestPausedReaderResumesAndGetsEverything(t *testing.T) {
	srv := startOneLoop(t, 256<<10)
	const n = 120 // 12 MiB of replies, far over the bound
	c := abuse(t, srv.Addr(), n, false)
	// Wait until the server stopped sending: its gets count stands still
	// for a while, well short of n, because the connection is paused at
	// its bound.
	var last uint64
	since := time.Now()
	poll.Until(t, 30*time.Second, "server paused at the bound", func() bool {
		if g := srv.Counters().Gets; g != last {
			last, since = g, time.Now()
		}
		return last > 0 && time.Since(since) > 200*time.Millisecond
	})
	if last >= n {
		t.Fatalf("all %d gets answered with nothing read: not bounded", last)
	}
	r := bufio.NewReader(c)
	head := fmt.Sprintf("VALUE big 0 %d\r\n", bigValue)
	body := make([]byte, bigValue+len("\r\nEND\r\n"))
	for i := 0; i < n; i++ {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		l, err := r.ReadString('\n')
		if err != nil || l != head {
			t.Fatalf("reply %d of %d: %q %v", i, n, l, err)
		}
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatalf("reply %d of %d: %v", i, n, err)
		}
		if !bytes.HasSuffix(body, []byte("v\r\nEND\r\n")) {
			t.Fatalf("reply %d: bad body end %q", i, body[len(body)-8:])
		}
	}
}
