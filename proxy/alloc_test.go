package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/layered"
)

// TestGetHitPathAllocatesNothing measures the whole data path of a get hit
// through the event loops: parse, L1 then L2 through the layering, reply.
// The client uses preallocated buffers, so the process-wide malloc count
// over many requests is the proxy's.
func TestGetHitPathAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	l1, _ := embedded.New(embedded.Config{})
	l2, _ := embedded.New(embedded.Config{})
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1}
	loops := proxytest.Loops(t, cfg)
	tier, err := layered.New(layered.Config{Threshold: 1 << 20}, l1, l2, loops) // hits stay in L2
	if err != nil {
		t.Fatal(err)
	}
	srv, err := proxy.New(cfg, tier, loops)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr() // the port the kernel chose
	defer srv.Stop(context.Background())

	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte("set k 5 0 10\r\n0123456789\r\n")); err != nil {
		t.Fatal(err)
	}
	stored := make([]byte, len("STORED\r\n"))
	if _, err := io.ReadFull(c, stored); err != nil || string(stored) != "STORED\r\n" {
		t.Fatalf("set: %q %v", stored, err)
	}

	const batch = 16
	req := bytes.Repeat([]byte("get k\r\n"), batch)
	hit := "VALUE k 5 10\r\n0123456789\r\nEND\r\n"
	want := bytes.Repeat([]byte(hit), batch)
	got := make([]byte, len(want))
	round := func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 200; i++ { // warm every buffer and pool
		round()
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("reply %q, want %q", got[:len(hit)], hit)
	}
	const rounds = 2000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < rounds; i++ {
		round()
	}
	runtime.ReadMemStats(&after)
	perReq := float64(after.Mallocs-before.Mallocs) / (rounds * batch)
	// Runtime background work (timers, the ticker) allocates a little per
	// second; a request that allocated would show as 1 or more.
	if perReq > 0.05 {
		t.Errorf("%.3f allocations per get hit, want 0", perReq)
	}
	t.Logf("%.4f allocations per get hit over %d requests", perReq, rounds*batch)
}
