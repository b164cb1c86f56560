package memcached

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/memcached/compat"
)

// md5Pool is a pool over four real memcached placing keys as twemproxy's
// MD5 ketama does: the layout whose requests Do holds for a batch.
func md5Pool(t *testing.T) (*harness, []Server) {
	t.Helper()
	var servers []Server
	for range 4 {
		servers = append(servers, Server{Addr: memcachedtest.Start(t).Addr})
	}
	return newHarness(t, Config{Servers: servers, Compat: "twemproxy", Hash: "md5"}, 0), servers
}

func held(h *harness) int { return h.pool.lstates[0].batch.n }

// TestBatchKeepsOrder: requests held for a batch leave in the order Do
// received them, and before a later request Do does not hold, so a get
// then a set of one key reads the old value and a set then a get the new
// one; and pipelines of sixteen mixed requests over keys of 0, 1, 55, 56
// and 250 bytes (the last two never held) answer as if each ran alone, in
// order.
func TestBatchKeepsOrder(t *testing.T) {
	h, _ := md5Pool(t)
	expect(t, "set", h.one(set("k", "old")), tiers.StatusStored, "")

	g, s := newCall(get("k")), newCall(set("k", "new"))
	h.pool.Do(&g.op)
	h.pool.Do(&s.op)
	if held(h) != 2 {
		t.Fatalf("%d of the get and the set held", held(h))
	}
	h.pool.FlushLoop(0)
	h.wait(g, s)
	expect(t, "get before the set", &g.op.Res, tiers.StatusHit, "old")
	expect(t, "the set", &s.op.Res, tiers.StatusStored, "")
	cs := h.run(set("k", "newer"), get("k"))
	expect(t, "get after a set", &cs[1].op.Res, tiers.StatusHit, "newer")

	long := strings.Repeat("k", 60) // hashed in two blocks: never held
	expect(t, "set", h.one(set(long, "old")), tiers.StatusStored, "")
	g, s = newCall(get("k")), newCall(set(long, "new"))
	h.pool.Do(&g.op)
	h.pool.Do(&s.op)
	if held(h) != 0 || g.done {
		t.Fatalf("a request Do does not hold left %d held (the held get done: %v)", held(h), g.done)
	}
	h.pool.FlushLoop(0)
	h.wait(g, s)
	expect(t, "held get", &g.op.Res, tiers.StatusHit, "newer")
	expect(t, "unheld set", &s.op.Res, tiers.StatusStored, "")

	// A flush_all is never held: a set held before it is flushed with
	// the rest.
	s, f := newCall(set("k", "flushed")), newCall(tiers.Request{Kind: tiers.KindFlush})
	h.pool.Do(&s.op)
	h.pool.Do(&f.op)
	h.pool.FlushLoop(0)
	h.wait(s, f)
	expect(t, "held set", &s.op.Res, tiers.StatusStored, "")
	expect(t, "flush_all", &f.op.Res, tiers.StatusStored, "")
	expect(t, "get after the flush", h.one(get("k")), tiers.StatusMiss, "")

	var keys []string // two of each length; the 0-byte key is refused by memcached's protocol
	for _, n := range []int{0, 1, 10, 54, 55, 56, 100, 250} {
		for i := range 2 {
			keys = append(keys, (string(rune('a'+i)) + strings.Repeat("x", 250))[:n])
		}
	}
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	heldSome := false
	for round := range 40 {
		reqs := make([]tiers.Request, 16)
		for i := range reqs {
			k := keys[rng.IntN(len(keys))]
			switch r := rng.IntN(10); {
			case r < 6:
				reqs[i] = get(k)
			case r < 9:
				reqs[i] = set(k, fmt.Sprint("v", round, "-", i))
			default:
				reqs[i] = tiers.Request{Kind: tiers.KindDelete, Key: []byte(k)}
			}
		}
		calls := make([]*call, len(reqs))
		for i, r := range reqs {
			calls[i] = newCall(r)
			h.pool.Do(&calls[i].op)
			heldSome = heldSome || held(h) > 0
		}
		h.pool.FlushLoop(0)
		h.wait(calls...)
		for i, c := range calls {
			k, res := string(c.op.Req.Key), &c.op.Res
			what := fmt.Sprintf("round %d, request %d (kind %d, %d-byte key)", round, i, c.op.Req.Kind, len(k))
			switch {
			case k == "":
				expect(t, what, res, tiers.StatusError, "")
			case c.op.Req.Kind == tiers.KindGet:
				if v, ok := model[k]; ok {
					expect(t, what, res, tiers.StatusHit, v)
				} else {
					expect(t, what, res, tiers.StatusMiss, "")
				}
			case c.op.Req.Kind == tiers.KindSet:
				expect(t, what, res, tiers.StatusStored, "")
				model[k] = string(c.op.Req.Value)
			default:
				_, ok := model[k]
				expect(t, what, res, map[bool]tiers.Status{true: tiers.StatusStored, false: tiers.StatusMiss}[ok], "")
				delete(model, k)
			}
		}
	}
	if !heldSome {
		t.Fatal("no get was ever held: the test checks nothing")
	}
}

// TestBatchLeavesOnFlushLoop: held requests are sent by the loop's flush
// round, and Batched says so while they wait; a full batch is sent at
// once.
func TestBatchLeavesOnFlushLoop(t *testing.T) {
	h, _ := md5Pool(t)
	var reqs []tiers.Request
	for i := range compat.Lanes {
		reqs = append(reqs, set("key:"+strconv.Itoa(i), "v"+strconv.Itoa(i)))
	}
	h.run(reqs...) // a full batch, then nothing held
	if h.pool.Batched(0) {
		t.Fatal("Batched with nothing held or written")
	}
	calls := make([]*call, compat.Lanes)
	for i := range calls {
		calls[i] = newCall(get("key:" + strconv.Itoa(i)))
	}
	for i, c := range calls[:compat.Lanes-1] {
		h.pool.Do(&c.op)
		if held(h) != i+1 || !h.pool.Batched(0) {
			t.Fatalf("after %d gets: %d held, Batched %v", i+1, held(h), h.pool.Batched(0))
		}
	}
	for _, s := range h.pool.route.Load().all {
		if n := s.conns[0].q.Len(); n != 0 {
			t.Fatalf("%s has %d requests queued while the gets are held", s.addr, n)
		}
	}
	h.pool.FlushLoop(0)
	if held(h) != 0 || h.pool.Batched(0) {
		t.Fatalf("after FlushLoop: %d held, Batched %v", held(h), h.pool.Batched(0))
	}
	h.wait(calls[:compat.Lanes-1]...)
	for i, c := range calls {
		c.done = false
		h.pool.Do(&c.op)
		if i == compat.Lanes-1 && (held(h) != 0 || !h.pool.Batched(0)) {
			t.Fatalf("a full batch: %d held, Batched %v", held(h), h.pool.Batched(0))
		}
	}
	h.pool.FlushLoop(0)
	h.wait(calls...)
	for i, c := range calls {
		expect(t, "get "+strconv.Itoa(i), &c.op.Res, tiers.StatusHit, "v"+strconv.Itoa(i))
	}
}

// TestBatchedGetOfDownServer: requests held for a batch whose server is
// marked down before the batch leaves fail as a request Do does not hold
// fails at once: with the server's down error.
func TestBatchedGetOfDownServer(t *testing.T) {
	h, _ := md5Pool(t)
	g, s := newCall(get("key:1")), newCall(set("key:1", "v"))
	h.pool.Do(&g.op)
	h.pool.Do(&s.op)
	if held(h) != 2 {
		t.Fatalf("%d of 2 held", held(h))
	}
	srv := h.pool.byAddr[h.pool.ServerFor([]byte("key:1"))]
	srv.state.Store(uint32(stateDown))
	defer srv.state.Store(uint32(stateUp))
	h.pool.FlushLoop(0)
	if !g.done || !s.done {
		t.Fatalf("done after the flush round: get %v, set %v", g.done, s.done)
	}
	var long *call // a key of the same server in two blocks: not held
	for i := 0; long == nil; i++ {
		if k := strings.Repeat("x", 60) + strconv.Itoa(i); h.pool.ServerFor([]byte(k)) == srv.addr {
			long = newCall(get(k))
		}
	}
	h.pool.Do(&long.op)
	if !long.done || long.op.Res.Err != srv.errDown {
		t.Fatalf("the unheld get: done %v, %v", long.done, long.op.Res.Err)
	}
	for _, c := range []*call{g, s} {
		if c.op.Res.Status != tiers.StatusError || c.op.Res.Err != srv.errDown {
			t.Fatalf("held %s: %v %v, want %v", c.op.Req.Key, c.op.Res.Status, c.op.Res.Err, srv.errDown)
		}
	}
	if !errors.Is(g.op.Res.Err, ErrDown) {
		t.Fatalf("%v is not ErrDown", g.op.Res.Err)
	}
}

// TestBatchRoutesUnderDoSnapshot: a request held across a change of the
// server list goes where the list Do saw places it.
func TestBatchRoutesUnderDoSnapshot(t *testing.T) {
	h, servers := md5Pool(t)
	five := append(append([]Server(nil), servers...), Server{Addr: memcachedtest.Start(t).Addr})
	layout := func(list []Server) *compat.Layout {
		cs := make([]compat.Server, len(list))
		for i, s := range list {
			host, port, _ := net.SplitHostPort(s.Addr)
			p, _ := strconv.Atoi(port)
			cs[i] = compat.Server{Host: host, Port: p, Weight: 1}
		}
		l, err := compat.New(compat.Spec{Scheme: compat.Twemproxy, Hash: "md5"}, cs)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	// Keys the fifth server takes over: a get routed under the new list
	// would miss them.
	l5 := layout(five)
	var moved []string
	for i := 0; len(moved) < compat.Lanes-1; i++ {
		if k := "key:" + strconv.Itoa(i); l5.Server([]byte(k)) == 4 {
			moved = append(moved, k)
			expect(t, "set "+k, h.one(set(k, k)), tiers.StatusStored, "")
		}
	}
	calls := make([]*call, len(moved))
	for i, k := range moved {
		calls[i] = newCall(get(k))
		h.pool.Do(&calls[i].op)
	}
	if held(h) != len(moved) {
		t.Fatalf("%d of %d gets held", held(h), len(moved))
	}
	if err := h.pool.SetServers(five); err != nil {
		t.Fatal(err)
	}
	h.pool.FlushLoop(0)
	h.wait(calls...)
	for _, c := range calls {
		expect(t, "held get of "+string(c.op.Req.Key), &c.op.Res, tiers.StatusHit, string(c.op.Req.Key))
	}
	if got, want := h.pool.ServerFor([]byte(moved[0])), five[4].Addr; got != want {
		t.Fatalf("after the change %s goes to %s, want %s", moved[0], got, want)
	}
}
