package memcached_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// moveHistory is what the clients of the randomized move test saw, for the
// checker.
type moveHistory struct {
	mu  sync.Mutex // guards ops
	ops []moveEvent
}

// moveEvent is one client request and its outcome. Times are from one
// monotonic clock.
type moveEvent struct {
	kind       byte // 'g', 's', 'd'
	key, value string
	acked      bool // a write that was acknowledged (STORED, DELETED, NOT_FOUND)
	hit        bool // a get that returned value
	start, end time.Time
}

func (h *moveHistory) add(e moveEvent) {
	h.mu.Lock()
	h.ops = append(h.ops, e)
	h.mu.Unlock()
}

// check returns the stale reads: a read of value v, written by W, such
// that some acknowledged write or delete W' of the key started after W
// was acknowledged and was itself acknowledged before the read started.
// A write that failed may still have been applied at any later time, so
// it never makes a later value stale, and a value it wrote is never
// stale either (it has no acknowledgement to order it by). A read of a
// value nobody wrote (the empty placeholder of a lease) is reported too.
func (h *moveHistory) check() (stale []string, reads, hits, acked int) {
	byKey := map[string][]moveEvent{}
	writer := map[string]moveEvent{}
	for _, e := range h.ops {
		byKey[e.key] = append(byKey[e.key], e)
		if e.kind == 's' {
			writer[e.value] = e
		}
	}
	for _, evs := range byKey {
		for _, r := range evs {
			if r.kind != 'g' {
				if r.acked {
					acked++
				}
				continue
			}
			reads++
			if !r.hit {
				continue
			}
			hits++
			w, ok := writer[r.value]
			if !ok {
				stale = append(stale, fmt.Sprintf("%s read %q, which no one wrote", r.key, r.value))
				continue
			}
			if !w.acked {
				continue
			}
			for _, w2 := range evs {
				if w2.kind != 'g' && w2.acked && w2.start.After(w.end) && w2.end.Before(r.start) {
					stale = append(stale, fmt.Sprintf("%s read %q (acked %v) after %c %q was acked (%v) before the read (%v)",
						r.key, r.value, w.end.Format("15:04:05.000000"), w2.kind, w2.value,
						w2.end.Format("15:04:05.000000"), r.start.Format("15:04:05.000000")))
					break
				}
			}
		}
	}
	return stale, reads, hits, acked
}

// moveStrata is one in-process strata: a proxy over one managed pool.
type moveStrata struct {
	pool *memcached.Pool
	addr string
}

func startMoveStrata(t *testing.T, mcs []*memcachedtest.Server, shards int) *moveStrata {
	t.Helper()
	cfg := memcached.Config{
		Shards: shards, Managed: true,
		ProbeInterval:  20 * time.Millisecond,
		RequestTimeout: 400 * time.Millisecond,
	}
	for _, m := range mcs {
		cfg.Servers = append(cfg.Servers, memcached.Server{Addr: m.Addr})
	}
	addr := fmt.Sprintf("127.0.0.1:%d", memcachedtest.FreePort(t))
	pcfg := proxy.Config{Listen: addr, Loops: 2}
	loops := proxytest.Loops(t, pcfg)
	p, err := memcached.New(cfg, loops)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	proxytest.Start(t, pcfg, p, loops)
	return &moveStrata{pool: p, addr: addr}
}

// mapState is the assignment the test's controller publishes from.
type mapState struct {
	t       *testing.T
	list    []shardmap.Server
	owner   []int
	version uint64
	// moveFrom is the source of each shard moving, kept from prepare to
	// the end of the move.
	moveFrom map[int]int
	// held[shard] are the servers that ever owned shard. The rule the
	// pools rely on: a shard never goes back to a server that may still
	// hold its old copies (here: that ever held it, since the test neither
	// flushes nor waits for expiry).
	held []map[int]bool
	// members is what the topology says of each server (state,
	// incarnation), indexed like list.
	members []shardmap.Member
}

// give makes server the owner of shard, enforcing the rule of held.
func (ms *mapState) give(shard, server int) {
	if ms.held[shard][server] {
		ms.t.Fatalf("test controller bug: shard %d back to server %d, which may hold its old copies", shard, server)
	}
	ms.held[shard][server] = true
	ms.owner[shard] = server
}

func (ms *mapState) topology(moves []shardmap.ShardMove) shardmap.Topology {
	ms.version++
	m, err := shardmap.NewMoving(ms.version, ms.list, ms.owner, moves)
	if err != nil {
		ms.t.Fatal(err)
	}
	return shardmap.Topology{Map: m, Members: append([]shardmap.Member(nil), ms.members...)}
}

// startMoveRig starts four memcached servers and two strata pools over
// them, and a map state giving shard sh to server sh%4.
func startMoveRig(t *testing.T, shards int) ([]*memcachedtest.Server, []*moveStrata, *mapState) {
	var mcs []*memcachedtest.Server
	var list []shardmap.Server
	for range 4 {
		m := memcachedtest.Start(t)
		mcs = append(mcs, m)
		list = append(list, shardmap.Server{Addr: m.Addr, Weight: 1})
	}
	st := []*moveStrata{startMoveStrata(t, mcs, shards), startMoveStrata(t, mcs, shards)}
	ms := &mapState{t: t, list: list, owner: make([]int, shards), held: make([]map[int]bool, shards), moveFrom: map[int]int{}}
	for _, s := range list {
		ms.members = append(ms.members, shardmap.Member{Server: s})
	}
	for sh := range ms.owner {
		ms.held[sh] = map[int]bool{}
		ms.give(sh, sh%4)
	}
	return mcs, st, ms
}

// TestMovesRandomized: two strata over four memcached, clients reading,
// writing and deleting random keys through both, while the controller
// (this test) moves shards through every phase, publishing each step to
// the two strata at different moments (the next step only once both have
// applied the last, as the control loop does); a server hangs (SIGSTOP),
// is failed over, continues (SIGCONT) with its old values, is flushed as a
// returning member and gets shards back; another is killed (kill -9) and
// failed over. No read may return a value older than an acknowledged
// write.
func TestMovesRandomized(t *testing.T) {
	const (
		shards  = 16
		keys    = 200
		workers = 6
	)
	mcs, st, ms := startMoveRig(t, shards)
	first := ms.topology(nil)
	for _, s := range st {
		if err := s.pool.ApplyTopology(first); err != nil {
			t.Fatal(err)
		}
	}

	wl := startWorkload(t, []string{st[0].addr, st[1].addr}, keys, workers)
	defer wl.halt() // a Fatal on the way must not leave clients running
	progress := wl.progress
	publish := func(tp shardmap.Topology) { wl.publish(tp, st[0].pool, st[1].pool) }
	// move runs the moves of shards to their new owners through every
	// phase.
	move := func(to map[int]int) {
		for _, ph := range []shardmap.MovePhase{shardmap.MovePrepare, shardmap.MoveHandoff, shardmap.MoveSettle, shardmap.MoveNone} {
			var moves []shardmap.ShardMove
			for sh, dst := range to {
				if ph == shardmap.MoveNone {
					continue
				}
				from := ms.owner[sh]
				if ph != shardmap.MovePrepare {
					from = ms.moveFrom[sh]
				} else {
					ms.moveFrom[sh] = from
				}
				moves = append(moves, shardmap.ShardMove{Shard: sh, Move: shardmap.Move{From: from, To: dst, Phase: ph}})
				if ph == shardmap.MoveHandoff {
					ms.give(sh, dst)
				}
			}
			publish(ms.topology(moves))
		}
	}
	// Moves off server 0.
	move(map[int]int{0: 1, 4: 2, 8: 1, 12: 3})

	// Server 2 hangs; its shards fail over to server 1 while it is hung,
	// and writes go on there. It continues holding the values they
	// replaced, so it owns nothing until every strata has flushed it
	// (listed as returning under a new incarnation).
	progress(100)
	mcs[2].Pause(t)
	poll.Until(t, 60*time.Second, "server 2 marked down by both strata", func() bool {
		return serverState(st[0].pool, mcs[2].Addr) == "down" && serverState(st[1].pool, mcs[2].Addr) == "down"
	})
	for sh, o := range ms.owner {
		if o == 2 {
			ms.give(sh, 1)
		}
	}
	publish(ms.topology(nil))
	progress(300)
	mcs[2].Resume(t)
	ms.members[2].State, ms.members[2].Incarnation = shardmap.MemberReturning, 1
	publish(ms.topology(nil))
	poll.Until(t, 60*time.Second, "server 2 flushed by both strata", func() bool {
		for _, s := range st {
			if inc, ok := s.pool.Flushed(mcs[2].Addr); !ok || inc != 1 || serverState(s.pool, mcs[2].Addr) != "up" {
				return false
			}
		}
		return true
	})
	ms.members[2].State = shardmap.MemberActive
	for _, h := range ms.held {
		delete(h, 2) // flushed: it holds nothing old any more
	}

	// Server 3 dies: its shards fail over to server 1 at once, no moves.
	progress(100)
	mcs[3].Stop()
	poll.Until(t, 60*time.Second, "server 3 marked down", func() bool {
		return serverState(st[0].pool, mcs[3].Addr) == "down" || serverState(st[1].pool, mcs[3].Addr) == "down"
	})
	for sh, o := range ms.owner {
		if o == 3 {
			ms.give(sh, 1)
		}
	}
	publish(ms.topology(nil))

	// Moves onto server 0 of shards it never held, one of them failed
	// over from server 3, and back onto the flushed server 2 of two
	// shards it held before it hung.
	move(map[int]int{1: 0, 5: 0, 3: 0, 2: 2, 10: 2})
	progress(300)

	hits, acked := wl.check()
	var fills uint64
	for i, s := range st {
		m := s.pool.Stats().Moves
		t.Logf("strata %d: %d fills, %d lost to a racing write or a new map, %d reads met another's lease, %d writes failed at the other side",
			i, m.Fills, m.FillsLost, m.LeaseMisses, m.OtherFailed)
		fills += m.Fills
	}
	if fills == 0 {
		t.Error("nothing was filled: the handoff phase was not exercised")
	}
	if hits < 100 || acked < 100 {
		t.Errorf("only %d hits and %d acknowledged writes: the workload did not exercise the moves", hits, acked)
	}
}

// workload is the clients of a randomized test: workers reading, writing
// and deleting random keys (with delete, or with a set that has expired
// already) through several strata, recorded for the checker.
type workload struct {
	t    *testing.T
	hist moveHistory
	done atomic.Int64 // requests answered, the clock the controller waits on
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	rng  *rand.Rand // the controller's, for the order of publications
}

func startWorkload(t *testing.T, addrs []string, keys, workers int) *workload {
	wl := &workload{t: t, stop: make(chan struct{}), rng: rand.New(rand.NewPCG(1, 2))}
	for w := range workers {
		wl.wg.Add(1)
		go func() {
			defer wl.wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			var cs []*rawClient
			for _, a := range addrs {
				c, err := dialRaw(a)
				if err != nil {
					t.Error(err)
					return
				}
				defer c.c.Close()
				cs = append(cs, c)
			}
			for seq := 0; ; seq++ {
				select {
				case <-wl.stop:
					return
				default:
				}
				c := cs[rng.IntN(len(cs))]
				c.deadline(20 * time.Second)
				key := fmt.Sprintf("k%d", rng.IntN(keys))
				e := moveEvent{key: key, start: time.Now()}
				var err error
				switch x := rng.IntN(100); {
				case x < 50:
					e.kind = 'g'
					var vals map[string]string
					vals, err = c.get(key)
					if err != nil && strings.Contains(err.Error(), "SERVER_ERROR") {
						err = nil // a failed read: the reply was one line, the stream is intact
					}
					if err == nil {
						e.value, e.hit = vals[key]
					}
				case x < 85:
					e.kind, e.value = 's', fmt.Sprintf("w%d.%d", w, seq)
					var l string
					l, err = c.set(key, e.value)
					e.acked = l == "STORED"
					if err == nil && !e.acked && !strings.HasPrefix(l, "SERVER_ERROR") {
						t.Errorf("set %s: %q", key, l)
					}
				case x < 93:
					e.kind = 'd'
					var l string
					l, err = c.del(key)
					e.acked = l == "DELETED" || l == "NOT_FOUND"
				default:
					// A set that has expired already: for the checker a
					// delete, since its value must never be read.
					e.kind = 'd'
					var l string
					l, err = c.setTTL(key, "expired", -1)
					e.acked = l == "STORED"
					if err == nil && !e.acked && !strings.HasPrefix(l, "SERVER_ERROR") {
						t.Errorf("set %s with an expired TTL: %q", key, l)
					}
				}
				if err != nil {
					t.Errorf("client: %v", err) // the proxy answers even when a backend fails
					return
				}
				e.end = time.Now()
				wl.hist.add(e)
				wl.done.Add(1)
			}
		}()
	}
	return wl
}

// halt stops the clients and waits for them. Idempotent.
func (wl *workload) halt() {
	wl.once.Do(func() { close(wl.stop) })
	wl.wg.Wait()
}

// progress waits until the clients have made n more requests.
func (wl *workload) progress(n int64) {
	wl.t.Helper()
	target := wl.done.Load() + n
	poll.Until(wl.t, 60*time.Second, "client progress", func() bool { return wl.done.Load() >= target })
}

// publish applies tp to the two pools in a random order, with client
// traffic before, between and after.
func (wl *workload) publish(tp shardmap.Topology, a, b *memcached.Pool) {
	wl.t.Helper()
	if wl.rng.IntN(2) == 0 {
		a, b = b, a
	}
	wl.progress(150)
	if err := a.ApplyTopology(tp); err != nil {
		wl.t.Fatal(err)
	}
	wl.progress(150)
	if err := b.ApplyTopology(tp); err != nil {
		wl.t.Fatal(err)
	}
}

// check halts the clients, reports every stale read as an error and
// returns the hits and acknowledged writes, for the caller to check the
// workload did something.
func (wl *workload) check() (hits, acked int) {
	wl.t.Helper()
	wl.halt()
	stale, reads, hits, acked := wl.hist.check()
	wl.t.Logf("%d requests: %d reads (%d hits), %d acknowledged writes and deletes; %d stale reads",
		len(wl.hist.ops), reads, hits, acked, len(stale))
	for i, s := range stale {
		if i == 10 {
			wl.t.Errorf("... and %d more", len(stale)-10)
			break
		}
		wl.t.Error("stale read: " + s)
	}
	return hits, acked
}

// TestMoveHistoryCheck: the checker flags a read of a value that an
// acknowledged write or delete had replaced before the read began, and
// nothing else.
func TestMoveHistoryCheck(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	w1 := moveEvent{kind: 's', key: "k", value: "v1", acked: true, start: at(0), end: at(1)}
	w2 := moveEvent{kind: 's', key: "k", value: "v2", acked: true, start: at(2), end: at(3)}
	lost := moveEvent{kind: 's', key: "k", value: "v0", start: at(0), end: at(1)}
	del := moveEvent{kind: 'd', key: "k", acked: true, start: at(2), end: at(3)}
	read := func(v string, ms int) moveEvent {
		return moveEvent{kind: 'g', key: "k", value: v, hit: v != "", start: at(ms), end: at(ms + 1)}
	}
	for _, c := range []struct {
		name string
		ops  []moveEvent
		want int
	}{
		{"newest value", []moveEvent{w1, w2, read("v2", 4)}, 0},
		{"older value after a newer write", []moveEvent{w1, w2, read("v1", 4)}, 1},
		{"older value while the newer write is in flight", []moveEvent{w1, w2, read("v1", 2)}, 0},
		{"deleted value", []moveEvent{w1, del, read("v1", 4)}, 1},
		{"a miss", []moveEvent{w1, w2, read("", 4)}, 0},
		{"an unacknowledged write's value", []moveEvent{lost, w2, read("v0", 4)}, 0},
		{"a value nobody wrote", []moveEvent{w1, read("", 4), {kind: 'g', key: "k", hit: true, start: at(4)}}, 1},
	} {
		h := moveHistory{ops: c.ops}
		if stale, _, _, _ := h.check(); len(stale) != c.want {
			t.Errorf("%s: %d stale reads %v, want %d", c.name, len(stale), stale, c.want)
		}
	}
}
