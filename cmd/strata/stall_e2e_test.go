package main

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/procstop"
	"github.com/strata-cache/strata/internal/testbin"
)

// A strata stopped (SIGSTOP) and resumed (SIGCONT) wakes holding requests
// its clients gave up on. None of its writes may land after a write
// acknowledged meanwhile, through another strata or through itself: the
// stalled strata answers them SERVER_ERROR (internal/stall's threshold is
// 500ms; these stops last longer than the clients wait, 1s).

// giveUp is how long the abandoning client waits for a reply.
const giveUp = time.Second

// abandon sends req on nc to a stopped strata, waits giveUp for a reply
// that must not come, and closes: a client that gave up.
func abandon(t *testing.T, nc net.Conn, req string) {
	t.Helper()
	if _, err := nc.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(giveUp))
	var b [64]byte
	if n, err := nc.Read(b[:]); err == nil {
		t.Fatalf("a stopped strata answered %q", b[:n])
	}
	_ = nc.Close()
}

// stopped runs fn with p stopped, and resumes p however fn ends.
func stopped(t *testing.T, p *process, fn func()) {
	t.Helper()
	if err := procstop.Stop(p.cmd.Process.Pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	defer p.signal(t, syscall.SIGCONT)
	fn()
}

// refusedAfterStall polls p's count of writes answered SERVER_ERROR for a
// stall until it reaches n (the held writes were read and refused), or
// until stale reports a stale read, which fails the test.
func refusedAfterStall(t *testing.T, listen string, n int, stale func() string) {
	t.Helper()
	c := mctext.Dial(t, listen)
	defer c.Close()
	var bad string
	poll.Until(t, 10*time.Second, fmt.Sprintf("%d writes refused after the stall", n), func() bool {
		if bad = stale(); bad != "" {
			return true
		}
		v, _ := strconv.Atoi(c.Stats("")["strata_stall_refused_writes"])
		return v >= n
	})
	if bad != "" {
		t.Fatalf("stale read after the stall: %s", bad)
	}
}

func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// Reproduction 3 of issue 24: two plain stratas over one memcached.
func TestAStalledStrataRunsNoWriteItsClientGaveUpOn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs memcached and two strata processes")
	}
	bin := testbin.BuildStrata(t)
	l2 := memcachedtest.Start(t)
	cfg := writeFile(t, "strata.toml", fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nservers = [%q]\n", l2.Addr))
	p1, p2 := startProcess(t, bin, cfg), startProcess(t, bin, cfg)
	direct := mctext.Dial(t, l2.Addr)

	// One client connected before the stop (its connection is open in
	// strata), one that connects while strata is stopped (the kernel
	// completes its handshake and takes its bytes).
	early := dialRaw(t, p2.listen)
	if _, err := early.Write([]byte("set k1 0 0 2\r\nv0\r\n")); err != nil {
		t.Fatal(err)
	}
	var b [16]byte
	if n, err := early.Read(b[:]); err != nil || string(b[:n]) != "STORED\r\n" {
		t.Fatalf("set through the second strata: %q %v", b[:n], err)
	}
	through1 := mctext.Dial(t, p1.listen)
	defer through1.Close()
	stopped(t, p2, func() {
		late := dialRaw(t, p2.listen)
		abandon(t, early, "set k1 0 0 2\r\nv1\r\n")
		abandon(t, late, "set k2 0 0 2\r\nv1\r\n")
		for _, k := range []string{"k1", "k2"} {
			if r := through1.Set(k, "v2", 0); r != "STORED" {
				t.Fatalf("set %s through the first strata: %q", k, r)
			}
		}
	})
	refusedAfterStall(t, p2.listen, 2, func() string {
		for _, k := range []string{"k1", "k2"} {
			if v, ok := direct.Get(k); !ok || v != "v2" {
				return fmt.Sprintf("%s in memcached: %q %v, want the acknowledged v2", k, v, ok)
			}
		}
		return ""
	})
	through2 := mctext.Dial(t, p2.listen)
	defer through2.Close()
	for _, k := range []string{"k1", "k2"} {
		for name, c := range map[string]*mctext.Conn{"memcached": direct, "the first strata": through1, "the stalled strata": through2} {
			if v, ok := c.Get(k); !ok || v != "v2" {
				t.Fatalf("%s through %s: %q %v, want the acknowledged v2", k, name, v, ok)
			}
		}
	}
	// The stalled strata takes writes again.
	if r := through2.Set("k1", "v3", 0); r != "STORED" {
		t.Fatalf("a write after the stall: %q", r)
	}
}

// stallFleet is the fleet of reproductions 1 and 2, as the issue gives it:
// short TTLs and fence, no policy moves within a test.
var stallFleet = fleetOptions{fenceAfter: "3s", maxTTL: "5s", minInterval: "6s", grace: "2s", migrateAfter: "1h"}

// abandonThroughStall stops region r's strata and, while it is stopped,
// sends set key v1 on a connection opened before the stop and on one
// opened during it, each from a client that gives up; then it runs
// meanwhile and resumes the strata.
func abandonThroughStall(t *testing.T, r *fleetRegion, key string, meanwhile func()) {
	t.Helper()
	early := dialRaw(t, r.listen)
	stopped(t, r.p, func() {
		late := dialRaw(t, r.listen)
		abandon(t, early, "set "+key+" 0 0 2\r\nv1\r\n")
		abandon(t, late, "set "+key+" 0 0 2\r\nv1\r\n")
		meanwhile()
	})
}

// Reproduction 1 of issue 24: regions a and c; the μ-shard is owned by
// a; c is stopped while its client sends a write of the μ-shard and gives
// up; a acknowledges a newer write. On waking, c must not forward the
// abandoned write to a.
func TestAStalledRegionForwardsNoWriteItsClientGaveUpOn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd, three memcached and three strata processes")
	}
	f := startFleet(t, stallFleet)
	a, c := f.region("a"), f.region("c")
	const m, key = "u: 7", "u:{7}:k"
	a.mustSet(t, key, "v0") // creates the μ-shard, owned by a
	f.settledAt(t, m, "a", 20*time.Second)
	c.mustGet(t, key, "v0") // c's view and its link to a are warm
	abandonThroughStall(t, c, key, func() {
		a.mustSet(t, key, "v2")
	})
	refusedAfterStall(t, c.listen, 2, func() string {
		it, err := a.client.Get(key)
		if err != nil || string(it.Value) != "v2" {
			return fmt.Sprintf("%s through a: %v %v, want the acknowledged v2", key, it, err)
		}
		return ""
	})
	a.mustGet(t, key, "v2")
	c.mustGet(t, key, "v2")
	if ms, ok := f.muShard(t, a, m); !ok || ms.Owner != "a" {
		t.Fatalf("the μ-shard moved during the test: %+v", ms)
	}
}

// Reproduction 2 of issue 24: the μ-shard is owned by c and migrates to a
// while c is stopped, with a write of it in c's socket that its client
// gave up on. On waking, c's view catches up with the move, and the held
// write must not reach a (the new owner, with the new epoch) after a's
// acknowledged write.
func TestAStalledOldOwnerForwardsNoWriteItsClientGaveUpOn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd, three memcached and three strata processes")
	}
	f := startFleet(t, stallFleet)
	a, c := f.region("a"), f.region("c")
	const m, key = "u: 7", "u:{7}:k"
	c.mustSet(t, key, "v0") // creates the μ-shard, owned by c
	f.settledAt(t, m, "c", 20*time.Second)
	a.mustGet(t, key, "v0") // a's view and its link to c are warm
	abandonThroughStall(t, c, key, func() {
		if code, body := f.migrateWithin(a, m, "a", 10*time.Second); code/100 != 2 {
			t.Fatalf("migrate to a: %d %s", code, body)
		}
		f.settledAt(t, m, "a", 60*time.Second)
		// A write during the move deletes at the stopped source and
		// fails; once a serves alone it is acknowledged.
		poll.Until(t, 30*time.Second, "a write through a acknowledged", func() bool {
			return a.client.Set(&memcache.Item{Key: key, Value: []byte("v2")}) == nil
		})
	})
	refusedAfterStall(t, c.listen, 2, func() string {
		it, err := a.client.Get(key)
		if err != nil || string(it.Value) != "v2" {
			return fmt.Sprintf("%s through a: %v %v, want the acknowledged v2", key, it, err)
		}
		return ""
	})
	a.mustGet(t, key, "v2")
	// c's view was fenced while it was stopped: it misses until it has
	// read the location again, and then reads a's value, never another.
	poll.Until(t, 15*time.Second, "c reads the acknowledged v2", func() bool {
		it, err := c.client.Get(key)
		if err == nil && string(it.Value) != "v2" {
			t.Fatalf("%s through c: %q, want the acknowledged v2", key, it.Value)
		}
		return err == nil
	})
	if ms, ok := f.muShard(t, a, m); !ok || ms.Owner != "a" {
		t.Fatalf("the μ-shard moved again during the test: %+v", ms)
	}
}
