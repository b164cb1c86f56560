package proxy_test

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
)

// TestParkedWorkStaysEmpty: connections on two loops park and unpark many
// times (text, meta and binary requests, pipelined, and a request sent in
// two writes), and the work every
// parked connection shares still reads as nothing in flight afterwards.
// A write to it would show every idle connection a phantom request.
func TestParkedWorkStaysEmpty(t *testing.T) {
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 2}
	srv := proxytest.Start(t, cfg, store, proxytest.Loops(t, cfg))
	for c := range 4 {
		nc, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		r := bufio.NewReader(nc)
		expect := func(want string) {
			t.Helper()
			got := make([]byte, len(want))
			if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
				t.Fatalf("connection %d: got %q (%v), want %q", c, got, err, want)
			}
		}
		for round := range 20 {
			_, _ = nc.Write([]byte("set k 0 0 1\r\nv\r\nget k k\r\nmg k v\r\nmn\r\n"))
			expect("STORED\r\nVALUE k 0 1\r\nv\r\nVALUE k 0 1\r\nv\r\nEND\r\nVA 1\r\nv\r\nMN\r\n")
			if round%5 == 0 { // a request in two pieces
				_, _ = nc.Write([]byte("get "))
				_, _ = nc.Write([]byte("k\r\n"))
				expect("VALUE k 0 1\r\nv\r\nEND\r\n")
			}
		}
	}
	// A binary client: its connection parks in binary mode.
	bc, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	_ = bc.SetDeadline(time.Now().Add(10 * time.Second))
	for range 3 {
		_, _ = bc.Write(binReq(0x0a, "", "", "", 7))
		h := make([]byte, 24)
		if _, err := io.ReadFull(bc, h); err != nil || h[0] != 0x81 || h[1] != 0x0a {
			t.Fatalf("binary noop: % x, %v", h, err)
		}
	}
	if !proxy.ParkedIsEmpty() {
		t.Fatal("the parked work was written to: idle connections read as busy")
	}
}
