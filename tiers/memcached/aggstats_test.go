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
		ms, err := p.fetchStats(addr, []string{"stats"}, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseUint(ms[0][name], 10, 64)
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
	// A round asks each server on one connection (each stat read opens
	// one more), and still reads the classes of stats items and slabs.
	before := stat(large.Addr, "total_connections")
	totals.Poll()
	if n := stat(large.Addr, "total_connections") - before; n != 2 {
		t.Errorf("a round opened %d connections to a server, want 1", n-1)
	}
	if items := string(totals.AppendItemStats(nil)); !strings.Contains(items, "STAT items:17:number 1\r\n") {
		t.Errorf("stats items after a round: %q", items)
	}
	if slabs := string(totals.AppendSlabStats(nil)); !strings.Contains(slabs, ":chunk_size ") || strings.Contains(slabs, "active_slabs 0\r\n") {
		t.Errorf("stats slabs after a round: %q", slabs)
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
