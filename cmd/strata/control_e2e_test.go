package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// checker runs a bounded random workload through several strata and
// proves that no read returned a value older than the last acknowledged
// write of its key. Each worker owns its keys, so "last acknowledged" is
// exact: values are the key's write counter.
type checker struct {
	clients []*memcache.Client
	keys    int
	// keyOf names worker w's key k; nil: "w<w>:k<k>".
	keyOf func(w, k int) string
	// seed varies the workload; the run is a function of it and the
	// replies.
	seed uint64

	stale, reads, hits, errs, writes atomic.Int64
	ghostReads                       atomic.Int64 // reads of a ghost allowed (stall_fault_test.go)
	mu                               sync.Mutex   // guards firstStale and ghosts
	firstStale                       string
	ghosts                           ghostState
}

type keyState struct {
	acked   int  // the last acknowledged write's counter (0: none)
	deleted bool // the last acknowledged change was a delete
	next    int
	// ackedAt: when the last acknowledged change was issued; a ghost
	// whose client gave up before it must not be read any more.
	ackedAt time.Time
}

func defaultKeyOf(w, k int) string { return fmt.Sprintf("w%d:k%d", w, k) }

func (c *checker) run(ctx context.Context, worker int) {
	rng := rand.New(rand.NewPCG(uint64(worker), 7+c.seed))
	st := make([]keyState, c.keys)
	keyOf := c.keyOf
	if keyOf == nil {
		keyOf = defaultKeyOf
	}
	for ctx.Err() == nil {
		k := rng.IntN(c.keys)
		key := keyOf(worker, k)
		cl := c.clients[rng.IntN(len(c.clients))]
		s := &st[k]
		switch r := rng.IntN(10); {
		case r < 3:
			s.next++
			issued := time.Now()
			if cl.Set(&memcache.Item{Key: key, Value: []byte(strconv.Itoa(s.next))}) == nil {
				s.acked, s.deleted, s.ackedAt = s.next, false, issued
				c.writes.Add(1)
			} else {
				c.errs.Add(1)
			}
		case r < 4:
			issued := time.Now()
			err := cl.Delete(key)
			if err == nil || errors.Is(err, memcache.ErrCacheMiss) {
				s.acked, s.deleted, s.ackedAt = s.next, true, issued
			} else {
				c.errs.Add(1)
			}
		default:
			c.reads.Add(1)
			it, err := cl.Get(key)
			switch {
			case errors.Is(err, memcache.ErrCacheMiss):
			case err != nil:
				c.errs.Add(1)
			default:
				c.hits.Add(1)
				if gaveUp, ok := c.ghost(key, string(it.Value)); ok {
					// A write whose client gave up: allowed until an
					// acknowledged change issued after that.
					if !gaveUp.IsZero() && s.ackedAt.After(gaveUp) {
						c.staleRead(fmt.Sprintf("%s read %s (abandoned in a stall) after acknowledged %d (deleted %v)", key, it.Value, s.acked, s.deleted))
					} else {
						c.ghostReads.Add(1)
					}
					continue
				}
				v, _ := strconv.Atoi(string(it.Value))
				if v < s.acked || (s.deleted && v <= s.acked) {
					c.staleRead(fmt.Sprintf("%s read %d after acknowledged %d (deleted %v)", key, v, s.acked, s.deleted))
				}
			}
		}
	}
}

// staleRead counts a stale read and keeps the first one's description.
func (c *checker) staleRead(what string) {
	c.stale.Add(1)
	c.mu.Lock()
	if c.firstStale == "" {
		c.firstStale = what
	}
	c.mu.Unlock()
}

// startMemcacheds starts n memcached servers for a managed pool, and
// lists their addresses in the same order.
func startMemcacheds(t *testing.T, n int) ([]*memcachedtest.Server, []string) {
	t.Helper()
	mc := make([]*memcachedtest.Server, n)
	addrs := make([]string, n)
	for i := range mc {
		mc[i] = memcachedtest.Start(t)
		addrs[i] = mc[i].Addr
	}
	return mc, addrs
}

// fastControl is the [control] timing of the managed-tier process tests:
// leases, reports and probes fast enough that a failover is seen within
// seconds.
const fastControl = `session_ttl = "2s"
report_interval = "500ms"
probe_interval = "250ms"
probe_timeout = "200ms"
detection = "1s"
`

// Two strata serve on real etcd over four real memcached, a workload
// through both: kill -9 one memcached, and its shards are served again
// within the detection time; drain a server under load and its shards
// leave, undrain and they return; SIGHUP with the file unchanged leaves
// the published map in place.
func TestControlPlaneFailoverDrainReload(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for about a minute")
	}
	etcd := etcdtest.Start(t)
	mc, addrs := startMemcacheds(t, 4)
	cfg := managedL2Config(t, addrs, etcd.Endpoint)
	bin := testbin.BuildStrata(t)
	procs := []*process{startProcess(t, bin, cfg), startProcess(t, bin, cfg)}
	ctl := admin.NewClient(procs[0].admin, "", 5*time.Second)
	ctx := context.Background()
	shardmap := func() admin.ShardMap {
		t.Helper()
		m, err := ctl.ShardMap(ctx, "l2")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	server := func(m admin.ShardMap, addr string) admin.ShardServer {
		for _, s := range m.Servers {
			if s.Addr == addr {
				return s
			}
		}
		t.Fatalf("%s not in the map %+v", addr, m)
		return admin.ShardServer{}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, p := range procs {
				t.Logf("strata %d:\n%s", i, p.stderr.String())
			}
		}
	})
	poll.Until(t, 20*time.Second, "a first published map", func() bool { return shardmap().Version >= 1 })

	ck := &checker{keys: 200}
	for _, p := range procs {
		cl := memcache.New(p.listen)
		cl.Timeout = 2 * time.Second
		ck.clients = append(ck.clients, cl)
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) { defer wg.Done(); ck.run(wctx, w) }(w)
	}
	stopLoad := func() {
		stop()
		wg.Wait()
	}
	defer stopLoad()
	poll.Until(t, 10*time.Second, "workload running", func() bool { return ck.reads.Load() > 500 })

	// kill -9 one memcached; time until a sweep of keys over every shard
	// is served through both strata without an error.
	victim := mc[2]
	killed := time.Now()
	victim.Stop()
	sweep := func() bool {
		for _, cl := range ck.clients {
			for i := 0; i < 1024; i++ {
				if _, err := cl.Get(fmt.Sprintf("sweep:%d", i)); err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
					return false
				}
			}
		}
		return true
	}
	// Served again: the start of the first sweep that met no error.
	var recovered time.Duration
	poll.Until(t, 15*time.Second, "every shard served again after kill -9", func() bool {
		began := time.Since(killed)
		ok := sweep()
		if ok {
			recovered = began
		}
		return ok
	})
	m := shardmap()
	if s := server(m, victim.Addr); s.State != "down" || s.Shards != 0 {
		t.Fatalf("killed server in the map: %+v", s)
	}
	t.Logf("kill -9 to every shard served again: %.2fs (detection 1s, probes every 250ms); map v%d", recovered.Seconds(), m.Version)
	if n := ck.stale.Load(); n != 0 {
		t.Fatalf("%d stale reads across the failover; first: %s", n, ck.firstStale)
	}

	// SIGSTOP one memcached (hung, not dead) while both strata write, then
	// SIGCONT it: it holds values overwritten meanwhile, so it is flushed
	// before it owns shards again.
	hung := mc[3]
	hung.Pause(t)
	poll.Until(t, 15*time.Second, "hung server declared down", func() bool {
		s := server(shardmap(), hung.Addr)
		return s.State == "down" && s.Shards == 0
	})
	poll.Until(t, 15*time.Second, "every shard served while one server hangs", sweep)
	writesWhileHung := ck.writes.Load()
	poll.Until(t, 10*time.Second, "writes while the server hangs", func() bool { return ck.writes.Load() > writesWhileHung+200 })
	hung.Resume(t)
	poll.Until(t, 30*time.Second, "resumed server flushed and given shards", func() bool {
		m := shardmap()
		s := server(m, hung.Addr)
		return s.State == "up" && s.Shards > 0 && m.MovesInFlight == 0
	})
	if n := ck.stale.Load(); n != 0 {
		t.Fatalf("%d stale reads across the hang; first: %s", n, ck.firstStale)
	}

	// Drain a live server under load: its shards leave; undrain: they return.
	drained := addrs[0]
	// The hit ratio over the reads just before the drain, and over the
	// drain itself.
	r0, h0 := ck.reads.Load(), ck.hits.Load()
	poll.Until(t, 20*time.Second, "a baseline of reads", func() bool { return ck.reads.Load() > r0+3000 })
	r1, h1 := ck.reads.Load(), ck.hits.Load()
	share := float64(server(shardmap(), drained).Shards) / 256
	var out, errOut bytes.Buffer
	if code := run([]string{"ctl", "--admin", procs[1].admin, "drain", "l2", drained}, &out, &errOut); code != 0 {
		t.Fatalf("strata ctl drain: exit %d: %s", code, errOut.String())
	}
	poll.Until(t, 10*time.Second, "strata ctl shardmap shows the server draining", func() bool {
		out.Reset()
		if code := run([]string{"ctl", "--admin", procs[1].admin, "shardmap", "l2"}, &out, &errOut); code != 0 {
			t.Fatalf("strata ctl shardmap: exit %d: %s", code, errOut.String())
		}
		return strings.Contains(out.String(), `"state": "draining"`) && strings.Contains(out.String(), `"moves_in_flight"`)
	})
	poll.Until(t, 30*time.Second, "drained server emptied", func() bool {
		m := shardmap()
		s := server(m, drained)
		return s.State == "draining" && s.Shards == 0 && m.MovesInFlight == 0
	})
	r2, h2 := ck.reads.Load(), ck.hits.Load()
	before0, during := float64(h1-h0)/float64(r1-r0), float64(h2-h1)/float64(r2-r1)
	t.Logf("drain of a server with %.0f%% of the shards: hit ratio %.3f before, %.3f during (warm handoff)", 100*share, before0, during)
	// Cold moves would lose about the server's share of hits; warm
	// handoff must lose less.
	if during <= before0*(1-share) {
		t.Fatalf("hit ratio %.3f during the drain, %.3f before: dips by the drained server's share (%.2f) or more", during, before0, share)
	}
	if n := ck.stale.Load(); n != 0 {
		t.Fatalf("%d stale reads across the drain; first: %s", n, ck.firstStale)
	}
	if _, err := ctl.SetDrain(ctx, "l2", drained, false); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "undrained server owns shards again", func() bool {
		m := shardmap()
		s := server(m, drained)
		return s.State == "up" && s.Shards > 0 && m.MovesInFlight == 0
	})
	if n := ck.stale.Load(); n != 0 {
		t.Fatalf("%d stale reads across the undrain; first: %s", n, ck.firstStale)
	}

	// SIGHUP with the file unchanged: the published map stays in force.
	before := shardmap()
	procs[1].signal(t, syscall.SIGHUP)
	poll.Until(t, 10*time.Second, "reload logged", func() bool { return strings.Contains(procs[1].stderr.String(), "reload") })
	poll.Until(t, 10*time.Second, "the reloaded strata still routes by the published map", sweep)
	// The leader may publish again meanwhile (its periodic rebalance
	// evens out what the undrain returned): the map must not go back,
	// and the reload must not have touched the servers.
	if after := shardmap(); after.Version < before.Version {
		t.Fatalf("reload went back to an older map: v%d -> v%d", before.Version, after.Version)
	}
	if strings.Contains(procs[1].stderr.String(), "setting=l2.servers") {
		t.Fatalf("a reload of an unchanged file changed the servers:\n%s", procs[1].stderr.String())
	}
	tiers, err := admin.NewClient(procs[1].admin, "", 5*time.Second).Tiers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range tiers {
		for _, s := range tr.Servers {
			if s.Addr == victim.Addr && s.Counters["shards"] != 0 {
				t.Fatalf("after SIGHUP the killed server owns %d shards again in the pool", s.Counters["shards"])
			}
		}
	}

	stopLoad()
	t.Logf("workload: %d reads (%d hits), %d writes, %d errors, %d stale", ck.reads.Load(), ck.hits.Load(), ck.writes.Load(), ck.errs.Load(), ck.stale.Load())
	if n := ck.stale.Load(); n != 0 {
		t.Fatalf("%d stale reads after the undrain; first: %s", n, ck.firstStale)
	}

	// kill -9 the leading strata: the other takes the loop over from the
	// last published version once the dead one's lease expires.
	last := shardmap().Version
	lead := -1
	for i, p := range procs {
		if strings.Contains(p.stderr.String(), "shard loop leads") {
			lead = i
		}
	}
	if lead < 0 {
		t.Fatal("no strata logged that it leads")
	}
	_ = procs[lead].cmd.Process.Kill()
	<-procs[lead].exited
	ctl = admin.NewClient(procs[1-lead].admin, "", 5*time.Second)
	if _, err := ctl.SetDrain(ctx, "l2", addrs[1], true); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "the surviving strata leads and drains", func() bool {
		m := shardmap()
		s := server(m, addrs[1])
		return s.State == "draining" && s.Shards == 0 && m.MovesInFlight == 0 && m.Version > last
	})
}

// strata control leads a fleet whose strata serve do not campaign: the
// serve applies what it publishes and reports; a drain goes through.
func TestStrataControlLeadsTheFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes")
	}
	etcd := etcdtest.Start(t)
	_, addrs := startMemcacheds(t, 2)
	cfg := writeFile(t, "fleet.toml", fmt.Sprintf(`[l1]
kind = "none"
[l2]
managed = true
shards = 64
servers = %s
[control]
etcd = [%q]
leader = false
%sgrace = "1s"
`, tomlList(addrs), etcd.Endpoint, fastControl))
	bin := testbin.BuildStrata(t)
	serve := startProcess(t, bin, cfg)
	ctl := admin.NewClient(serve.admin, "", 5*time.Second)
	ctx := context.Background()
	if m, err := ctl.ShardMap(ctx, "l2"); err != nil || m.Version != 0 {
		t.Fatalf("before any leader: %+v %v", m, err)
	}

	control := startControl(t, bin, cfg)
	poll.Until(t, 20*time.Second, "strata control publishes", func() bool {
		m, err := ctl.ShardMap(ctx, "l2")
		return err == nil && m.Version >= 1
	})
	if _, err := ctl.SetDrain(ctx, "l2", addrs[0], true); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 20*time.Second, "drained through strata control", func() bool {
		m, err := ctl.ShardMap(ctx, "l2")
		if err != nil {
			return false
		}
		for _, s := range m.Servers {
			if s.Addr == addrs[0] {
				return s.State == "draining" && s.Shards == 0 && m.MovesInFlight == 0
			}
		}
		return false
	})
	control.terminate(t)
}

// controlProc is a `strata control` process a test started.
type controlProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan error
}

// startControl runs `strata control --config cfg` until the test ends; its
// stderr is kept for failure messages.
func startControl(t *testing.T, bin, cfg string) *controlProc {
	t.Helper()
	c := &controlProc{cmd: exec.Command(bin, "control", "--config", cfg), stderr: &syncBuffer{}, exited: make(chan error, 1)}
	c.cmd.Stderr = c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		<-c.exited
	})
	return c
}

// terminate sends SIGTERM and fails t unless the process exits 0 soon.
func (c *controlProc) terminate(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.exited:
		c.exited <- err // for the cleanup
		if err != nil {
			t.Fatalf("strata control exit: %v\n%s", err, c.stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("strata control did not stop on SIGTERM:\n%s", c.stderr.String())
	}
}

// managedL2Config is the file of the control-plane process tests: a
// managed L2 of 256 shards over addrs, failures seen within a probe,
// the control plane on etcd with fast timings and a short grace.
func managedL2Config(t *testing.T, addrs []string, etcd string) string {
	t.Helper()
	return writeFile(t, "strata.toml", fmt.Sprintf(`[l1]
kind = "none"
[l2]
managed = true
shards = 256
timeout = "1s"
failure_threshold = 1
probe_interval = "200ms"
servers = %s
[control]
etcd = [%q]
%sgrace = "2s"
rebalance_interval = "1h"
`, tomlList(addrs), etcd, fastControl))
}
