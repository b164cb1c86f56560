package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/memcachedtest"
)

// mcStat reads one counter of memcached's stats at addr.
func mcStat(t *testing.T, addr, name string) int64 {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("stats\r\n")); err != nil {
		t.Fatal(err)
	}
	var out []byte
	buf := make([]byte, 8192)
	for !strings.HasSuffix(string(out), "END\r\n") {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			t.Fatalf("stats of %s: %v", addr, err)
		}
	}
	for _, l := range strings.Split(string(out), "\r\n") {
		if f := strings.Fields(l); len(f) == 3 && f[1] == name {
			n, _ := strconv.ParseInt(f[2], 10, 64)
			return n
		}
	}
	t.Fatalf("no %s in the stats of %s", name, addr)
	return 0
}

// Shard scaling end to end, on real etcd and two real memcached behind
// one strata: a shard read hard gets a read replica on the other server,
// reads then reach both (memcached's own get_hits), a reader never sees a
// value older than its own acknowledged write through the replica, and
// once the reads stop the replica is removed.
func TestShardScalingAddsAndRemovesReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	etcd := etcdtest.Start(t)
	addrs := []string{memcachedtest.Start(t).Addr, memcachedtest.Start(t).Addr}
	cfg := writeFile(t, "scale.toml", fmt.Sprintf(`[l1]
kind = "none"
[l2]
managed = true
shards = 16
servers = %s
[control]
etcd = [%q]
session_ttl = "2s"
report_interval = "500ms"
probe_interval = "250ms"
probe_timeout = "200ms"
detection = "1s"
grace = "1s"
rebalance_interval = "1s"
replica_band = [5, 50]
max_replicas = 2
`, tomlList(addrs), etcd.Endpoint))
	bin := buildStrata(t)
	proc := startProcess(t, bin, cfg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("strata:\n%s", proc.stderr.String())
		}
	})
	ctl := admin.NewClient(proc.admin, "", 5*time.Second)
	ctx := context.Background()
	shardmap := func() admin.ShardMap {
		t.Helper()
		m, err := ctl.ShardMap(ctx, "l2")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	replicas := func() (n int) {
		for _, s := range shardmap().Servers {
			n += s.Replicas
		}
		return n
	}
	eventually(t, 20*time.Second, "a first published map", func() bool { return shardmap().Version >= 1 })

	// One hot key, read in a loop and rewritten every 50 reads; each read
	// must return the reader's own last acknowledged write.
	cl := memcache.New(proc.listen)
	cl.Timeout = 2 * time.Second
	hitsBefore := []int64{mcStat(t, addrs[0], "get_hits"), mcStat(t, addrs[1], "get_hits")}
	hctx, stopHot := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex // guards the counters below
	var reads, stale, acked int
	var firstStale string
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := 0
		for i := 0; hctx.Err() == nil; i++ {
			if i%50 == 0 {
				if cl.Set(&memcache.Item{Key: "hot", Value: []byte(strconv.Itoa(i))}) == nil {
					last = i
					mu.Lock()
					acked++
					mu.Unlock()
				}
				continue
			}
			it, err := cl.Get("hot")
			if err != nil {
				continue // a miss or a failed read is never stale
			}
			v, _ := strconv.Atoi(string(it.Value))
			mu.Lock()
			reads++
			if v < last {
				stale++
				if firstStale == "" {
					firstStale = fmt.Sprintf("read %d after acknowledged %d", v, last)
				}
			}
			mu.Unlock()
		}
	}()
	stopped := false
	halt := func() {
		if !stopped {
			stopped = true
			stopHot()
			wg.Wait()
		}
	}
	defer halt()

	eventually(t, 30*time.Second, "the hot shard gets a replica", func() bool { return replicas() == 1 })
	// Serving once every strata applied it: then both servers answer
	// reads of the hot key.
	eventually(t, 30*time.Second, "reads reach both servers", func() bool {
		return mcStat(t, addrs[0], "get_hits") > hitsBefore[0]+100 && mcStat(t, addrs[1], "get_hits") > hitsBefore[1]+100
	})
	m := shardmap()
	t.Logf("hot shard scaled out: map v%d, servers %+v", m.Version, m.Servers)
	// The split of a window of reads over the two servers.
	h0 := []int64{mcStat(t, addrs[0], "get_hits"), mcStat(t, addrs[1], "get_hits")}
	mu.Lock()
	r0 := reads
	mu.Unlock()
	eventually(t, 30*time.Second, "2000 more reads", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return reads >= r0+2000
	})
	d0, d1 := mcStat(t, addrs[0], "get_hits")-h0[0], mcStat(t, addrs[1], "get_hits")-h0[1]
	t.Logf("a window of hot reads: %d hits at %s, %d at %s", d0, addrs[0], d1, addrs[1])
	if d0 < 200 || d1 < 200 {
		t.Errorf("reads of a replicated shard did not spread: %d and %d hits", d0, d1)
	}

	halt()
	mu.Lock()
	t.Logf("hot reader: %d reads, %d acknowledged writes, %d stale", reads, acked, stale)
	if stale != 0 {
		t.Errorf("%d stale reads through the replica; first: %s", stale, firstStale)
	}
	mu.Unlock()
	eventually(t, 30*time.Second, "the replica is removed once the reads stop", func() bool { return replicas() == 0 })
}
