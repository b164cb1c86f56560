package locality_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/loccache"
	"github.com/strata-cache/strata/tiers/memcached"
)

// BenchmarkCPUPerRequest measures the CPU this process (one strata)
// spends per get, for a μ-shard served here from the L2 memcached pool
// and for one forwarded over a region link, side by side from one run.
// The peer region's link is a real memcached (a link speaks the meta
// protocol, and memcached echoes the opaque token), and the load comes
// from a child process, so the process's CPU time is the strata's alone:
// parse, route, the backend or link round trip, reply.
//
//	go test -run '^$' -bench CPUPerRequest -benchtime 200000x ./tiers/locality/
func BenchmarkCPUPerRequest(b *testing.B) {
	l2 := memcachedtest.Start(b)
	peer := memcachedtest.Start(b) // region "a"'s link
	value := string(bytes.Repeat([]byte("v"), 100))
	for _, mc := range []*memcachedtest.Server{l2, peer} {
		c, err := net.Dial("tcp", mc.Addr)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(c, "set u:{1}:k 0 0 %d\r\n%s\r\n", len(value), value)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if line != "STORED\r\n" {
			b.Fatalf("preset: %q", line)
		}
	}
	results := map[string]float64{}
	for _, c := range []struct{ name, owner string }{{"local_l2", "b"}, {"forwarded", "a"}} {
		b.Run(c.name, func(b *testing.B) {
			addr, batches := startRouter(b, l2.Addr, peer.Addr, c.owner)
			w0 := batches()
			ns := cpuPerRequest(b, addr, b.N)
			b.ReportMetric(ns, "cpu-ns/req")
			b.ReportMetric(float64(b.N)/float64(max(batches()-w0, 1)), "req/write")
			results[c.name] = ns
		})
	}
	if l, f := results["local_l2"], results["forwarded"]; l > 0 && f > 0 {
		b.Logf("CPU per get at this strata: local L2 %.0f ns, forwarded %.0f ns, ratio %.2f", l, f, f/l)
	}
}

// startRouter runs a strata of region "b" whose μ-shard u: 1 is owned by
// owner, with l2 as its L2 and peer as region "a"'s link. batches counts
// the writes to the L2 and the link (requests per write is the batching).
func startRouter(b *testing.B, l2, peer, owner string) (addr string, batches func() uint64) {
	b.Helper()
	pcfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 1}
	loops := proxytest.Loops(b, pcfg)
	pool, err := memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: l2}}}, loops)
	if err != nil {
		b.Fatal(err)
	}
	links, err := link.New(link.Config{Peers: map[string]string{"a": peer}}, loops)
	if err != nil {
		b.Fatal(err)
	}
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	d := &syncDir{loc: loccache.Location{Owner: owner, Epoch: 1, State: loccache.Stable}}
	tier, err := locality.New(locality.Config{Region: "b"}, locality.Deps{Inner: pool, Rules: rules, Directory: d, Links: links, Loops: loops})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := proxy.New(pcfg, tier, loops)
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
		_ = links.Close()
		_ = pool.Close()
	})
	return srv.Addr(), func() uint64 { return pool.Stats().Total.Writes + links.Stats().Writes }
}

// cpuPerRequest runs n gets from a child process against addr and returns
// this process's CPU time (user + system) per get.
func cpuPerRequest(b *testing.B, addr string, n int) float64 {
	b.Helper()
	// Warm up: connections dialled, buffers grown.
	runLoad(b, addr, 2000)
	before := cpuTime()
	b.ResetTimer()
	runLoad(b, addr, n)
	b.StopTimer()
	return float64(cpuTime()-before) / float64(n)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func runLoad(b *testing.B, addr string, n int) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "STRATA_LOAD_ADDR="+addr, "STRATA_LOAD_N="+strconv.Itoa(n))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("load: %v\n%s", err, out)
	}
}

// TestMain runs the child process of BenchmarkCPUPerRequest when
// STRATA_LOAD_ADDR is set: it sends STRATA_LOAD_N gets of one key over 4
// connections, 32 pipelined at a time, checks every reply, and exits.
func TestMain(m *testing.M) {
	if addr := os.Getenv("STRATA_LOAD_ADDR"); addr != "" {
		total, _ := strconv.Atoi(os.Getenv("STRATA_LOAD_N"))
		if err := load(addr, total); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func load(addr string, total int) error {
	const conns, depth = 4, 32
	reply := fmt.Sprintf("VALUE u:{1}:k 0 100\r\n%s\r\nEND\r\n", bytes.Repeat([]byte("v"), 100))
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := 0; i < conns; i++ {
		n := total / conns
		if i == 0 {
			n += total % conns
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Minute))
			batch := bytes.Repeat([]byte("get u:{1}:k\r\n"), depth)
			want := bytes.Repeat([]byte(reply), depth)
			got := make([]byte, len(want))
			for n > 0 {
				k := min(depth, n)
				if _, err := c.Write(batch[:k*len("get u:{1}:k\r\n")]); err != nil {
					errs <- err
					return
				}
				if _, err := io.ReadFull(c, got[:k*len(reply)]); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got[:k*len(reply)], want[:k*len(reply)]) {
					errs <- fmt.Errorf("unexpected reply %q", got[:min(200, k*len(reply))])
					return
				}
				n -= k
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil once closed and empty
}
