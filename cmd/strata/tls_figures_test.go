package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/bench/driver"
	"github.com/strata-cache/strata/bench/proc"
	"github.com/strata-cache/strata/bench/workload"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/testbin"
	"github.com/strata-cache/strata/internal/tlstest"
)

// TestTLSFigures measures what docs/tls.md reports: strata's embedded
// default and memcached, over TLS and plaintext, in the same run; a
// single-tier strata over memcached -Z and over plaintext memcached; and
// handshakes per second. It takes a minute, so it runs only with
// STRATA_TLS_FIGURES=1 (seconds per point: STRATA_TLS_SECONDS, default 3).
func TestTLSFigures(t *testing.T) {
	if os.Getenv("STRATA_TLS_FIGURES") == "" {
		t.Skip("set STRATA_TLS_FIGURES=1 to measure")
	}
	secs := 3 * time.Second
	if v := os.Getenv("STRATA_TLS_SECONDS"); v != "" {
		d, err := time.ParseDuration(v + "s")
		if err != nil {
			t.Fatal(err)
		}
		secs = d
	}
	bin := testbin.BuildStrata(t)
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "figures")
	caPath, cert, key := ca.WriteFiles(t, dir, "server")
	client := &tls.Config{RootCAs: ca.Pool, ServerName: "localhost", ClientSessionCache: tls.NewLRUClientSessionCache(64)}

	mcTLS := memcachedtest.StartTLS(t, nil, cert, key, "-m", "256", "-t", "2")
	mcPlain := memcachedtest.Start(t, "-m", "256", "-t", "2")
	mcBackTLS := memcachedtest.StartTLS(t, nil, cert, key, "-m", "256", "-t", "2")
	mcBackPlain := memcachedtest.Start(t, "-m", "256", "-t", "2")
	tlsKeys := fmt.Sprintf("[tls]\ncert = %q\nkey = %q\n", cert, key)
	stTLS := startProcess(t, bin, writeFile(t, "tls.toml", tlsKeys))
	stPlain := startProcess(t, bin, writeFile(t, "plain.toml", "[server]\nloops = 0\n"))
	single := "[l1]\nkind = \"none\"\n[l2]\ntimeout = \"2s\"\nservers = [%q]\n"
	stOverTLS := startProcess(t, bin, writeFile(t, "over-tls.toml", fmt.Sprintf(single+"tls = true\nca = %q\nserver_name = \"localhost\"\n", mcBackTLS.Addr, caPath)))
	stOverPlain := startProcess(t, bin, writeFile(t, "over-plain.toml", fmt.Sprintf(single, mcBackPlain.Addr)))

	type target struct {
		name string
		addr string
		pid  int
		tls  bool
	}
	targets := []target{
		{"strata embedded, TLS", stTLS.listen, stTLS.cmd.Process.Pid, true},
		{"memcached -Z", mcTLS.Addr, mcTLS.Pid(), true},
		{"strata embedded, plain", stPlain.listen, stPlain.cmd.Process.Pid, false},
		{"memcached, plain", mcPlain.Addr, mcPlain.Pid(), false},
		{"strata over memcached -Z", stOverTLS.listen, stOverTLS.cmd.Process.Pid, false},
		{"strata over memcached", stOverPlain.listen, stOverPlain.cmd.Process.Pid, false},
	}
	out := &tableWriter{w: os.Stdout}
	out.row("target", "depth", "ops/s", "server CPU µs/op", "p99 µs", "max µs")
	for _, depth := range []int{1, 16} {
		for _, tg := range targets {
			prof, _ := workload.Builtin("getset-90-10")
			w, err := workload.New(prof)
			if err != nil {
				t.Fatal(err)
			}
			var cpu0 time.Duration
			cfg := driver.Config{Target: tg.addr, Workload: w, Conns: 20, Pipeline: depth, Duration: secs,
				Started: func() { cpu0, _ = proc.CPUTime(tg.pid) }}
			if tg.tls {
				cfg.TLS = client
			}
			res, err := driver.Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("%s: %v", tg.name, err)
			}
			cpu1, _ := proc.CPUTime(tg.pid)
			if res.Errors > 0 || res.Lost > 0 {
				t.Errorf("%s depth %d: %d errors, %d lost", tg.name, depth, res.Errors, res.Lost)
			}
			perOp := float64((cpu1 - cpu0).Microseconds()) / float64(max(res.Requests, 1))
			out.row(tg.name, fmt.Sprint(depth), fmt.Sprintf("%.0f", res.OpsPerSec), fmt.Sprintf("%.1f", perOp), fmt.Sprintf("%.0f", res.Latency.P99), fmt.Sprintf("%.0f", res.Latency.Max))
		}
	}
	out.row("", "", "", "", "", "")
	out.row("handshakes (new connection + one get each)", "", "per second", "server CPU µs/handshake", "", "")
	for _, tg := range targets[:2] {
		n, cpu := handshakes(t, tg.addr, tg.pid, &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}, secs)
		out.row(tg.name, "", fmt.Sprintf("%.0f", n), fmt.Sprintf("%.0f", cpu), "", "")
	}
}

// handshakes opens connections with full handshakes from 4 goroutines for
// d, each sending one get; it returns handshakes per second and the
// server's CPU per handshake.
func handshakes(t *testing.T, addr string, pid int, cfg *tls.Config, d time.Duration) (float64, float64) {
	var n, failed atomic.Int64
	cpu0, _ := proc.CPUTime(pid)
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 5)
			for time.Since(start) < d {
				c, err := tls.Dial("tcp", addr, cfg)
				if err != nil {
					failed.Add(1)
					continue
				}
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := io.WriteString(c, "get nokey\r\n"); err != nil {
					failed.Add(1)
				} else if _, err := io.ReadFull(c, buf); err != nil {
					failed.Add(1)
				} else {
					n.Add(1)
				}
				_ = c.Close()
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	cpu1, _ := proc.CPUTime(pid)
	if failed.Load() > 0 {
		t.Errorf("%s: %d handshakes failed", addr, failed.Load())
	}
	return float64(n.Load()) / el.Seconds(), float64((cpu1 - cpu0).Microseconds()) / float64(max(n.Load(), 1))
}

// tableWriter prints a Markdown table.
type tableWriter struct {
	w     io.Writer
	title bool
}

func (tw *tableWriter) row(cells ...string) {
	line := "|"
	for _, c := range cells {
		line += " " + c + " |"
	}
	fmt.Fprintln(tw.w, line)
	if !tw.title {
		tw.title = true
		sep := "|"
		for range cells {
			sep += "---|"
		}
		fmt.Fprintln(tw.w, sep)
	}
}
