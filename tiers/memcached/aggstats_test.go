package memcached

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/memcachedtest"
)

// TestServerTotalsMemory: Memory is memcached's own bytes and
// limit_maxbytes summed over the servers that answered the last round,
// and unknown before the first round and when none answered.
func TestServerTotalsMemory(t *testing.T) {
	small, large := memcachedtest.Start(t, "-m", "8"), memcachedtest.Start(t, "-m", "16")
	p, err := New(Config{Servers: []Server{{Addr: small.Addr}, {Addr: large.Addr}}}, newTestLoops(1))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	stat := func(addr, name string) uint64 {
		t.Helper()
		m, err := p.fetchStats(addr, "stats", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseUint(m[name], 10, 64)
		if err != nil {
			t.Fatalf("%s %s: %v", addr, name, err)
		}
		return v
	}
	totals := NewServerTotals(p, time.Hour, 5*time.Second)
	if _, _, ok := totals.Memory(); ok {
		t.Fatal("memory known before the first round")
	}
	for i, mc := range []*memcachedtest.Server{small, large, large} {
		c := memcache.New(mc.Addr)
		if err := c.Set(&memcache.Item{Key: "k" + strconv.Itoa(i), Value: []byte(strings.Repeat("v", 1000*(i+1)))}); err != nil {
			t.Fatal(err)
		}
	}
	totals.Start()
	defer totals.Stop()
	used, limit, ok := totals.Memory()
	wantUsed := stat(small.Addr, "bytes") + stat(large.Addr, "bytes")
	if !ok || used != wantUsed || limit != 24<<20 || stat(small.Addr, "limit_maxbytes")+stat(large.Addr, "limit_maxbytes") != 24<<20 {
		t.Fatalf("memory %d of %d (%v), want %d of %d", used, limit, ok, wantUsed, 24<<20)
	}
	if used < 6000 {
		t.Fatalf("6000 bytes of values written, memcached counts %d", used)
	}

	// One server gone: what the other holds.
	large.Stop()
	totals.Poll()
	if used, limit, ok := totals.Memory(); !ok || used != stat(small.Addr, "bytes") || limit != 8<<20 {
		t.Fatalf("with one server: %d of %d (%v)", used, limit, ok)
	}
	small.Stop()
	totals.Poll()
	if used, limit, ok := totals.Memory(); ok {
		t.Fatalf("with no server answering: %d of %d known", used, limit)
	}
}
