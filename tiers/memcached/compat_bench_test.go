package memcached

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
)

// compatBenchPool is a pool over four real memcached, placing keys by the
// shard map (scheme "") or a compat scheme, with 64 keys holding 100-byte
// values and warm Ops to read them.
func compatBenchPool(b testing.TB, scheme, hash string) (*harness, []*call) {
	var servers []Server
	for range 4 {
		servers = append(servers, Server{Addr: memcachedtest.Start(b).Addr})
	}
	h := newHarness(b, Config{Servers: servers, Compat: scheme, Hash: hash}, 0)
	value := strings.Repeat("v", 100)
	calls := make([]*call, 64)
	for i := range calls {
		key := fmt.Sprint("user:", i*7919, ":profile")
		h.one(set(key, value))
		calls[i] = newCall(get(key))
		calls[i].op.Res.Value = make([]byte, 0, 128)
	}
	return h, calls
}

// cpuNow is the process's user plus system CPU time, in nanoseconds.
func cpuNow() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkPoolGetByLayout runs pipelined gets (64 per round, as a busy
// event loop issues them) through a pool placing keys by its shard map and
// by each kind of compat layout, side by side in one run. cpu-ns/op is the
// pool process's CPU per get (memcached runs in its own processes), the
// figure the guide compares.
func BenchmarkPoolGetByLayout(b *testing.B) {
	for _, c := range []struct{ name, scheme, hash string }{
		{"shardmap", "", ""},
		{"twemproxy-ketama-fnv1a_64", "twemproxy", ""},
		{"twemproxy-ketama-md5", "twemproxy", "md5"},
		{"libmemcached-ketama", "libmemcached-ketama", ""},
		{"pymemcache", "pymemcache", ""},
		{"mcrouter-ch3", "mcrouter-ch3", ""},
		{"gomemcache", "gomemcache", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			h, cs := compatBenchPool(b, c.scheme, c.hash)
			roundTrip(h, cs)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cpuNow()
			n := 0
			for n < b.N {
				roundTrip(h, cs)
				n += len(cs)
			}
			b.ReportMetric(float64(cpuNow()-cpu0)/float64(n), "cpu-ns/op")
		})
	}
}

// TestCompatPoolGetAllocs: a compat pool's get, like the shard map's,
// allocates nothing once warm (on MD5 ketama, held for a batch too).
func TestCompatPoolGetAllocs(t *testing.T) {
	for _, c := range []struct{ scheme, hash string }{
		{"twemproxy", ""}, {"twemproxy", "md5"}, {"libmemcached-ketama", ""}, {"pymemcache", ""}, {"mcrouter-ch3", ""},
	} {
		scheme := c.scheme + " " + c.hash
		h, cs := compatBenchPool(t, c.scheme, c.hash)
		for range 5 {
			roundTrip(h, cs)
		}
		if n := testing.AllocsPerRun(50, func() { roundTrip(h, cs) }); n != 0 {
			t.Errorf("%s: a warm batch of %d gets allocates %.1f times", scheme, len(cs), n)
		}
		for _, c := range cs {
			if c.op.Res.Status != tiers.StatusHit {
				t.Fatalf("%s: get %s: %+v", scheme, c.op.Req.Key, c.op.Res)
			}
		}
	}
}
