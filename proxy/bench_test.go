package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
)

// BenchmarkPipelinedGetSet measures the proxy's path for one client that
// pipelines batches of gets and sets over an embedded store: wall time per
// request, and the process's CPU time per request (cpu-ns/req, client
// included), the figure a change to the request path is judged by.
func BenchmarkPipelinedGetSet(b *testing.B) {
	srv := embeddedServer(b, 1)
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = srv.Stop(context.Background()) }()
	c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const batch = 32 // requests per write: half sets, half gets
	var req bytes.Buffer
	for i := 0; i < batch/2; i++ {
		req.WriteString("set k 0 0 5\r\nhello\r\nget k\r\n")
	}
	want := len("STORED\r\n"+"VALUE k 0 5\r\nhello\r\nEND\r\n") * batch / 2
	r := bufio.NewReaderSize(c, 64<<10)
	buf := make([]byte, want)
	round := func() {
		if _, err := c.Write(req.Bytes()); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r, buf); err != nil {
			b.Fatal(err)
		}
	}
	round()
	rounds := max(b.N/batch, 1)
	cpu0 := cpuNanos()
	b.ResetTimer()
	for i := 0; i < rounds; i++ {
		round()
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuNanos()-cpu0)/float64(rounds*batch), "cpu-ns/req")
}

func cpuNanos() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkCountersRead measures one read of the data plane's counters as
// the admin history takes it every second, even when nothing happens
// (Counters, RequestCounts, Latencies), on a two-loop server: its cost is
// a floor under an idle process's CPU.
func BenchmarkCountersRead(b *testing.B) {
	srv := embeddedServer(b, 2)
	b.ReportAllocs()
	for b.Loop() {
		_ = srv.Counters()
		_ = srv.RequestCounts()
		_ = srv.Latencies()
	}
}

// embeddedServer builds, without starting it, a server on loops event
// loops over a fresh embedded store.
func embeddedServer(b *testing.B, loops int) *proxy.Server {
	b.Helper()
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		b.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: loops}
	srv, err := proxy.New(cfg, store, proxytest.Loops(b, cfg))
	if err != nil {
		b.Fatal(err)
	}
	return srv
}
