package memcached_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
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

// l1Kind says what the L1 tier of a test strata is.
type l1Kind int

const (
	l1Memcached l1Kind = iota
	l1None
	l1Embedded
)

// setup describes an in-process strata for the end-to-end tests.
type setup struct {
	l1        l1Kind
	l2Servers int    // memcached servers in the L2 pool (default 1)
	threshold uint32 // N (default 32)
	rand      func() uint64
	mcArgs    []string // extra memcached arguments
	pool      func(*memcached.Config)
	l1Pool    func(*memcached.Config) // after pool, for the L1 pool only
	loops     int                     // proxy event loops (default 2)
}

// strata is a proxy over layered tiers on real memcached processes.
type strata struct {
	t      *testing.T
	l1mc   *memcachedtest.Server // nil unless l1Memcached
	l2mc   []*memcachedtest.Server
	l1, l2 *memcached.Pool // l1 is nil unless l1Memcached
	tier   *layered.Tier
	srv    *proxy.Server
	addr   string
}

// neverPromote is a coin that never comes up: Decide needs r below 2^64/N.
func neverPromote() uint64 { return ^uint64(0) }

func startStrata(t *testing.T, s setup) *strata {
	t.Helper()
	if s.l2Servers == 0 {
		s.l2Servers = 1
	}
	if s.threshold == 0 {
		s.threshold = 32
	}
	if s.loops == 0 {
		s.loops = 2
	}
	st := &strata{t: t}
	poolCfg := func(mcs ...*memcachedtest.Server) memcached.Config {
		cfg := memcached.Config{
			ProbeInterval:  20 * time.Millisecond,
			RequestTimeout: 2 * time.Second, // a loaded CI host running -race; the tests of timeouts set their own
		}
		for _, m := range mcs {
			cfg.Servers = append(cfg.Servers, memcached.Server{Addr: m.Addr})
		}
		if s.pool != nil {
			s.pool(&cfg)
		}
		return cfg
	}
	pcfg := proxy.Config{Listen: "127.0.0.1:0", Loops: s.loops}
	loops := proxytest.Loops(t, pcfg)
	var l1 tiers.Tier
	var pools []*memcached.Pool
	switch s.l1 {
	case l1Memcached:
		st.l1mc = memcachedtest.Start(t, s.mcArgs...)
		cfg := poolCfg(st.l1mc)
		cfg.FlushOnReturn = true // as strata serve configures an L1 pool
		if s.l1Pool != nil {
			s.l1Pool(&cfg)
		}
		p, err := memcached.New(cfg, loops)
		if err != nil {
			t.Fatal(err)
		}
		st.l1, l1 = p, p
		pools = append(pools, p)
	case l1Embedded:
		e, err := embedded.New(embedded.Config{MaxBytes: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		l1 = e
	}
	for range s.l2Servers {
		st.l2mc = append(st.l2mc, memcachedtest.Start(t, s.mcArgs...))
	}
	l2, err := memcached.New(poolCfg(st.l2mc...), loops)
	if err != nil {
		t.Fatal(err)
	}
	st.l2 = l2
	pools = append(pools, l2)
	for _, p := range pools {
		t.Cleanup(func() { _ = p.Close() })
	}
	tier, err := layered.New(layered.Config{Threshold: s.threshold, Rand: s.rand}, l1, l2, loops)
	if err != nil {
		t.Fatal(err)
	}
	st.tier = tier
	srv, err := proxy.New(pcfg, tier, loops,
		proxy.WithStats(func(dst []byte, args [][]byte) []byte {
			if len(args) > 0 {
				return dst
			}
			if st.l1 != nil {
				dst = st.l1.AppendStats(dst, "l1")
			}
			return l2.AppendStats(dst, "l2")
		}))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	st.addr = srv.Addr() // the port the kernel chose
	st.srv = srv
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return st
}

// serverState is the health of addr in pool p.
func serverState(p *memcached.Pool, addr string) string {
	for _, s := range p.Stats().Servers {
		if s.Addr == addr {
			return s.State
		}
	}
	return "absent"
}

// rawClient speaks the text protocol over one connection.
type rawClient struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func dialRaw(addr string) (*rawClient, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	return &rawClient{c: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 64<<10)}, nil
}

func mustDial(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := dialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.c.Close() })
	return c
}

func (c *rawClient) deadline(d time.Duration) { _ = c.c.SetDeadline(time.Now().Add(d)) }

func (c *rawClient) line() (string, error) {
	s, err := c.r.ReadString('\n')
	return strings.TrimSuffix(s, "\r\n"), err
}

// getReply reads the reply of a get: the values by key, or the error line.
func (c *rawClient) getReply() (map[string]string, error) {
	vals := map[string]string{}
	for {
		l, err := c.line()
		if err != nil {
			return nil, err
		}
		if l == "END" {
			return vals, nil
		}
		f := strings.Fields(l)
		if len(f) < 4 || f[0] != "VALUE" {
			return nil, fmt.Errorf("reply line %q", l)
		}
		n, err := strconv.Atoi(f[3])
		if err != nil {
			return nil, fmt.Errorf("reply line %q", l)
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return nil, err
		}
		vals[f[1]] = string(buf[:n])
	}
}

// get sends one get (of one or more keys) and reads its reply.
func (c *rawClient) get(keys ...string) (map[string]string, error) {
	fmt.Fprintf(c.w, "get %s\r\n", strings.Join(keys, " "))
	if err := c.w.Flush(); err != nil {
		return nil, err
	}
	return c.getReply()
}

// set stores key and returns the reply line.
func (c *rawClient) set(key, value string) (string, error) { return c.setTTL(key, value, 0) }

// setTTL stores key with exptime ttl (negative: expired at once).
func (c *rawClient) setTTL(key, value string, ttl int) (string, error) {
	fmt.Fprintf(c.w, "set %s 0 %d %d\r\n%s\r\n", key, ttl, len(value), value)
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	return c.line()
}

func (c *rawClient) del(key string) (string, error) {
	fmt.Fprintf(c.w, "delete %s\r\n", key)
	if err := c.w.Flush(); err != nil {
		return "", err
	}
	return c.line()
}

// loadDirect stores key=value pairs straight into a memcached, pipelined.
func loadDirect(t *testing.T, addr string, kv map[string]string) {
	t.Helper()
	c := mustDial(t, addr)
	c.deadline(30 * time.Second)
	for k, v := range kv {
		fmt.Fprintf(c.w, "set %s 0 0 %d noreply\r\n%s\r\n", k, len(v), v)
	}
	fmt.Fprintf(c.w, "mn\r\n")
	if err := c.w.Flush(); err != nil {
		t.Fatal(err)
	}
	if l, err := c.line(); err != nil || l != "MN" {
		t.Fatalf("loading %s: %q %v", addr, l, err)
	}
}

// presentDirect returns which of keys a memcached holds, asking it
// directly, 100 keys per get.
func presentDirect(t *testing.T, addr string, keys []string) map[string]string {
	t.Helper()
	c := mustDial(t, addr)
	c.deadline(30 * time.Second)
	out := map[string]string{}
	for i := 0; i < len(keys); i += 100 {
		vals, err := c.get(keys[i:min(i+100, len(keys))]...)
		if err != nil {
			t.Fatalf("asking %s: %v", addr, err)
		}
		for k, v := range vals {
			out[k] = v
		}
	}
	return out
}
