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
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
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
%sgrace = "1s"
rebalance_interval = "1s"
replica_band = [5, 50]
max_replicas = 2
`, tomlList(addrs), etcd.Endpoint, fastControl))
	bin := testbin.BuildStrata(t)
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
	poll.Until(t, 20*time.Second, "a first published map", func() bool { return shardmap().Version >= 1 })

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

	poll.Until(t, 30*time.Second, "the hot shard gets a replica", func() bool { return replicas() == 1 })
	// Serving once every strata applied it: then both servers answer
	// reads of the hot key.
	poll.Until(t, 30*time.Second, "reads reach both servers", func() bool {
		return mcStat(t, addrs[0], "get_hits") > hitsBefore[0]+100 && mcStat(t, addrs[1], "get_hits") > hitsBefore[1]+100
	})
	m := shardmap()
	t.Logf("hot shard scaled out: map v%d, servers %+v", m.Version, m.Servers)
	// The split of a window of reads over the two servers.
	h0 := []int64{mcStat(t, addrs[0], "get_hits"), mcStat(t, addrs[1], "get_hits")}
	mu.Lock()
	r0 := reads
	mu.Unlock()
	poll.Until(t, 30*time.Second, "2000 more reads", func() bool {
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
	poll.Until(t, 30*time.Second, "the replica is removed once the reads stop", func() bool { return replicas() == 0 })
}

// Shard scaling under faults, on real etcd: three memcached, two strata, a
// randomized workload through both whose read rate puts every shard above
// the band, so replicas are added on every server; then one memcached
// hangs (SIGSTOP) and continues, and another dies (kill -9), while the
// leader drops their replicas, fails their shards over and flushes the
// hung one before it serves again, and a strata stalls (SIGSTOP) while a
// client abandons writes to it; then the load stops and every replica
// is removed. The checker proves no read returned a value older than the
// last acknowledged write of its key, nor an abandoned write after a
// later acknowledged one.
func TestShardScalingUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	etcd := etcdtest.Start(t)
	mc, addrs := startMemcacheds(t, 3)
	cfg := writeFile(t, "scale-faults.toml", fmt.Sprintf(`[l1]
kind = "none"
[l2]
managed = true
shards = 16
timeout = "1s"
failure_threshold = 1
probe_interval = "200ms"
servers = %s
[control]
etcd = [%q]
%sgrace = "1s"
rebalance_interval = "1s"
replica_band = [2, 10]
max_replicas = 3
`, tomlList(addrs), etcd.Endpoint, fastControl))
	bin := testbin.BuildStrata(t)
	procs := []*process{startProcess(t, bin, cfg), startProcess(t, bin, cfg)}
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range procs {
				t.Logf("strata %d:\n%s", i, p.stderr.String())
			}
		}
	})
	ctl := admin.NewClient(procs[0].admin, "", 5*time.Second)
	ctx := context.Background()
	server := func(addr string) (admin.ShardServer, int) {
		t.Helper()
		m, err := ctl.ShardMap(ctx, "l2")
		if err != nil {
			t.Fatal(err)
		}
		total, out := 0, admin.ShardServer{}
		for _, s := range m.Servers {
			total += s.Replicas
			if s.Addr == addr {
				out = s
			}
		}
		return out, total
	}
	poll.Until(t, 20*time.Second, "a first published map", func() bool {
		m, err := ctl.ShardMap(ctx, "l2")
		return err == nil && m.Version >= 1
	})

	ck := &checker{keys: 100}
	for _, p := range procs {
		cl := memcache.New(p.listen)
		cl.Timeout = 2 * time.Second
		ck.clients = append(ck.clients, cl)
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); ck.run(wctx, w) }()
	}
	stopped := false
	stopLoad := func() {
		if !stopped {
			stopped = true
			stop()
			wg.Wait()
		}
	}
	defer stopLoad()
	staleFree := func(when string) {
		t.Helper()
		if n := ck.stale.Load(); n != 0 {
			t.Fatalf("%d stale reads %s; first: %s", n, when, ck.firstStale)
		}
	}

	poll.Until(t, 30*time.Second, "replicas on every server", func() bool {
		for _, a := range addrs {
			if s, _ := server(a); s.Replicas == 0 {
				return false
			}
		}
		return true
	})
	_, n := server("")
	t.Logf("scaled out: %d replicas over 16 shards", n)

	// SIGSTOP a server holding replicas: declared down, its replicas
	// dropped; it continues with old values and is flushed before it
	// serves again.
	hung := mc[2]
	hung.Pause(t)
	// Meanwhile a strata stalls: stopped while a client abandons writes
	// of checked keys to it (stall_fault_test.go).
	seed := uint64(time.Now().UnixNano())
	t.Logf("stall fault seed %d", seed)
	stallEnd := ck.stallOneOf(t, procs, seed, 2*time.Second, 4)
	poll.Until(t, 15*time.Second, "hung server declared down, its replicas dropped", func() bool {
		s, _ := server(hung.Addr)
		return s.State == "down" && s.Shards == 0 && s.Replicas == 0
	})
	writes := ck.writes.Load()
	poll.Until(t, 10*time.Second, "writes while the server hangs", func() bool { return ck.writes.Load() > writes+200 })
	hung.Resume(t)
	poll.Until(t, 30*time.Second, "resumed server flushed and up", func() bool {
		s, _ := server(hung.Addr)
		return s.State == "up"
	})
	stall := stallEnd()
	staleFree("across the hang")

	// kill -9 a server once it holds replicas again: whichever the
	// leader gave them to. That may be the one that hung: it comes back
	// flushed and holding no shard, so the allocator may put every
	// replica there.
	var victim *memcachedtest.Server
	poll.Until(t, 30*time.Second, "replicas on a server to kill", func() bool {
		for _, m := range mc {
			if s, _ := server(m.Addr); s.State == "up" && s.Replicas > 0 {
				victim = m
				return true
			}
		}
		return false
	})
	t.Logf("killing %s (the one that hung: %v)", victim.Addr, victim == hung)
	victim.Stop()
	poll.Until(t, 15*time.Second, "killed server declared down, its replicas dropped", func() bool {
		s, _ := server(victim.Addr)
		return s.State == "down" && s.Shards == 0 && s.Replicas == 0
	})
	writes = ck.writes.Load()
	poll.Until(t, 10*time.Second, "writes after the kill", func() bool { return ck.writes.Load() > writes+200 })
	staleFree("across the kill")

	// The load stops: every replica goes.
	stopLoad()
	poll.Until(t, 30*time.Second, "every replica removed once the reads stop", func() bool { _, n := server(""); return n == 0 })
	t.Logf("workload: %d reads (%d hits), %d writes, %d errors, %d stale", ck.reads.Load(), ck.hits.Load(), ck.writes.Load(), ck.errs.Load(), ck.stale.Load())
	stall.log(t, ck, procs[0].listen, procs[1].listen)
	staleFree("in the whole run")
	if ck.hits.Load() < 1000 || ck.writes.Load() < 1000 {
		t.Fatalf("only %d hits and %d writes: the workload did not exercise the replicas", ck.hits.Load(), ck.writes.Load())
	}
}
