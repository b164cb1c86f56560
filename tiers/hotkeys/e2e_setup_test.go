package hotkeys_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/hotkeys"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/memcached"
)

// strata is one proxy process's graph, built in the test process: pools
// over real memcached, the layering, the hot-key tier and the proxy.
type strata struct {
	addr   string
	hk     *hotkeys.Tier
	l1, l2 *memcached.Pool
}

type strataOpts struct {
	l1, l2 []*memcachedtest.Server
	cfg    hotkeys.Config
	marks  hotkeys.MarkStore
	// threshold is the layering's promotion N (default 32).
	threshold uint32
}

func poolOf(t *testing.T, loops *proxy.Loops, mcs []*memcachedtest.Server, isL1 bool) *memcached.Pool {
	t.Helper()
	// An L1 pool flushes on return, as strata serve builds it.
	cfg := memcached.Config{ProbeInterval: 20 * time.Millisecond, RequestTimeout: 5 * time.Second, FlushOnReturn: isL1}
	for _, m := range mcs {
		cfg.Servers = append(cfg.Servers, memcached.Server{Addr: m.Addr})
	}
	p, err := memcached.New(cfg, loops)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func startStrata(t *testing.T, o strataOpts) *strata {
	t.Helper()
	s := &strata{addr: fmt.Sprintf("127.0.0.1:%d", memcachedtest.FreePort(t))}
	pcfg := proxy.Config{Listen: s.addr, Loops: 2}
	loops := proxytest.Loops(t, pcfg)
	var l1 tiers.Tier
	d := hotkeys.Deps{Marks: o.marks, Loops: loops}
	if len(o.l1) > 0 {
		s.l1 = poolOf(t, loops, o.l1, true)
		l1 = s.l1
		d.L1, d.L1Placer = s.l1, s.l1
	}
	s.l2 = poolOf(t, loops, o.l2, false)
	d.L2Placer = s.l2
	lay, err := layered.New(layered.Config{Threshold: o.threshold}, l1, s.l2, loops)
	if err != nil {
		t.Fatal(err)
	}
	d.Inner = lay
	d.Async = true
	if s.hk, err = hotkeys.New(o.cfg, d); err != nil {
		t.Fatal(err)
	}
	srv, err := proxy.New(pcfg, s.hk, loops)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return s
}

func startMemcached(t *testing.T, n int) []*memcachedtest.Server {
	out := make([]*memcachedtest.Server, n)
	for i := range out {
		out[i] = memcachedtest.Start(t, "-m", "64")
	}
	return out
}

func client(addr string) *memcache.Client {
	c := memcache.New(addr)
	c.Timeout = 5 * time.Second
	c.MaxIdleConns = 4
	return c
}

// mcStats reads one memcached's stats directly.
func mcStats(t *testing.T, addr string) map[string]string {
	t.Helper()
	return mcStatsArgs(t, addr, "")
}

// mcStatsArgs reads `stats <args>` from addr.
func mcStatsArgs(t *testing.T, addr, args string) map[string]string {
	t.Helper()
	c := mctext.Dial(t, addr)
	defer c.Close()
	return c.Stats(args)
}

func statUint(t *testing.T, st map[string]string, name string) uint64 {
	n, err := strconv.ParseUint(st[name], 10, 64)
	if err != nil {
		t.Fatalf("stat %s = %q", name, st[name])
	}
	return n
}

func statSeconds(st map[string]string, name string) float64 {
	f, _ := strconv.ParseFloat(st[name], 64)
	return f
}

// mgDirect reads key (any bytes) straight from one memcached with the meta
// protocol: the value, or false on a miss.
func mgDirect(t *testing.T, addr string, key []byte) (string, bool) {
	t.Helper()
	c := mctext.Dial(t, addr)
	defer c.Close()
	l := c.Line("mg " + base64.StdEncoding.EncodeToString(key) + " b v\r\n")
	f := strings.Fields(l)
	if len(f) == 0 || f[0] == "EN" {
		return "", false
	}
	if f[0] != "VA" || len(f) < 2 {
		t.Fatalf("mg reply %q", l)
	}
	n, _ := strconv.Atoi(f[1])
	return c.ReadBlock(n), true
}

// subKey is the name of candidate c of key (the package's naming,
// restated so the test reads the servers independently).
func subKey(key string, c int) []byte {
	return append([]byte(key), append([]byte{0x1f, 'h', 'k'}, strconv.Itoa(c)...)...)
}
