package proxy_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/memcached"
)

// readReply reads one reply of a text-protocol get or set and returns what
// it was: "END" with the keys of its VALUE lines, or the single line of
// any other reply (STORED, SERVER_ERROR ...).
func readReply(rd *bufio.Reader) (string, []string, error) {
	var keys []string
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return "", keys, err
		}
		line = strings.TrimSuffix(line, "\r\n")
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "VALUE" {
			n, err := strconv.Atoi(f[3])
			if err != nil {
				return "", keys, fmt.Errorf("bad VALUE line %q", line)
			}
			if _, err := rd.Discard(n + 2); err != nil {
				return "", keys, err
			}
			keys = append(keys, f[1])
			continue
		}
		return line, keys, nil
	}
}

// Backend timeouts must not cost a client a reply: with backend requests
// timing out while memcached is stopped (and its late replies arriving
// once it continues, on connections already dropped), every request of
// every pipelined client still gets exactly one reply, in order. Two
// set-ups: an embedded L1, which answers within the call, over an L2 pool
// (the page's); and an L1 pool over the L2 pool, where promotions and the
// invalidations delayed behind them complete later, on their own loops.
// The outbound bound is the smallest allowed, so connections also pause
// and resume around the timeouts.
func TestEveryRequestAnsweredThroughBackendTimeouts(t *testing.T) {
	cfg := proxy.Config{Listen: "127.0.0.1:0", Loops: 2, MaxOutboundBytes: proxy.MinOutboundBytes}
	pool := func(t *testing.T, loops *proxy.Loops, m *memcachedtest.Server, l1 bool) *memcached.Pool {
		p, err := memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: m.Addr}},
			RequestTimeout: 30 * time.Millisecond, ProbeInterval: 50 * time.Millisecond, FlushOnReturn: l1}, loops)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	t.Run("embedded-l1", func(t *testing.T) {
		m := memcachedtest.Start(t, "-m", "64")
		l1, err := embedded.New(embedded.Config{MaxBytes: 16 << 20})
		if err != nil {
			t.Fatal(err)
		}
		loops := proxytest.Loops(t, cfg)
		l2 := pool(t, loops, m, false)
		answerThroughTimeouts(t, cfg, loops, l1, l2, m)
	})
	t.Run("pool-l1", func(t *testing.T) {
		m1, m2 := memcachedtest.Start(t, "-m", "64"), memcachedtest.Start(t, "-m", "64")
		loops := proxytest.Loops(t, cfg)
		l1, l2 := pool(t, loops, m1, true), pool(t, loops, m2, false)
		answerThroughTimeouts(t, cfg, loops, l1, l2, m1, m2)
	})
}

// answerThroughTimeouts serves l1 over l2 and runs pipelined clients while
// it stops and continues the memcached servers hang, in turn.
func answerThroughTimeouts(t *testing.T, cfg proxy.Config, loops *proxy.Loops, l1, l2 tiers.Tier, hang ...*memcachedtest.Server) {
	tier, err := layered.New(layered.Config{Threshold: 2}, l1, l2, loops)
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
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})

	const clients, batches = 4, 300
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	var failed, answered atomic.Int64
	for ci := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			rd := bufio.NewReader(c)
			for n := range batches {
				// A batch: reads of a key this client rewrites and of a
				// shared tail, writes, and a read right behind a write of
				// its key (held by the proxy until the write is done).
				var b strings.Builder
				var want []string // the key of each get, "" for a set
				for i := range 4 {
					tail := fmt.Sprintf("k:%d", (n*7+i*13)%50)
					fmt.Fprintf(&b, "get hot:%d\r\nget %s\r\n", ci, tail)
					want = append(want, fmt.Sprintf("hot:%d", ci), tail)
				}
				w := fmt.Sprintf("k:%d", n%50)
				fmt.Fprintf(&b, "set %s 0 0 3\r\nabc\r\nget %s\r\nset hot:%d 0 0 1\r\nh\r\n", w, w, ci)
				want = append(want, "", w, "")
				_ = c.SetDeadline(time.Now().Add(20 * time.Second))
				if _, err := c.Write([]byte(b.String())); err != nil {
					errs <- fmt.Errorf("client %d batch %d: write: %v", ci, n, err)
					return
				}
				for i, key := range want {
					line, keys, err := readReply(rd)
					if err != nil {
						errs <- fmt.Errorf("client %d batch %d: reply %d of %d: %v", ci, n, i, len(want), err)
						return
					}
					// Any request may fail with SERVER_ERROR while memcached
					// hangs; otherwise a get answers END, with at most its
					// own key, and a set STORED.
					ok := strings.HasPrefix(line, "SERVER_ERROR ") && len(keys) == 0
					if key != "" {
						ok = ok || (line == "END" && (len(keys) == 0 || len(keys) == 1 && keys[0] == key))
					} else {
						ok = ok || line == "STORED"
					}
					if !ok {
						errs <- fmt.Errorf("client %d batch %d: reply %d is %q with values %v, for %q", ci, n, i, line, keys, key)
						return
					}
					if strings.HasPrefix(line, "SERVER_ERROR ") {
						failed.Add(1)
					} else {
						answered.Add(1)
					}
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// Stop and continue memcached while the clients run: the requests
	// queued at it time out, and its replies to them arrive late. The
	// sleeps are how long a server hangs and how long it serves between
	// hangs, not waits for an event.
	for i := 0; i < 20; i++ {
		select {
		case err := <-errs:
			close(stop)
			<-done
			t.Fatal(err)
		case <-done:
		default:
		}
		m := hang[i%len(hang)]
		m.Pause(t)
		time.Sleep(time.Duration(10+i*7%60) * time.Millisecond)
		m.Resume(t)
		time.Sleep(time.Duration(5+i*11%40) * time.Millisecond)
	}
	select {
	case err := <-errs:
		close(stop)
		<-done
		t.Fatal(err)
	case <-done:
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The run must have seen both: requests that timed out, or it did not
	// test the timeout path, and requests answered around them.
	t.Logf("%d replies, %d of them SERVER_ERROR", answered.Load()+failed.Load(), failed.Load())
	if failed.Load() == 0 || answered.Load() == 0 {
		t.Fatalf("%d requests failed and %d were answered: the run must see both", failed.Load(), answered.Load())
	}
}
