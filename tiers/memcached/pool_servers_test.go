package memcached

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
)

// TestPoolDownProbeUp: a server that dies is marked down, probed, and
// served again when it returns, without a restart of the pool.
func TestPoolDownProbeUp(t *testing.T) {
	mc := memcachedtest.Start(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}, ProbeInterval: 20 * time.Millisecond, RequestTimeout: time.Second}, 0)
	expect(t, "set", h.one(set("k", "v")), tiers.StatusStored, "")
	mc.Stop()
	// Each failure is a lost connection or a refused dial; within a few
	// requests the server is down and requests fail fast.
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := h.one(get("k"))
		if r.Status != tiers.StatusError {
			t.Fatalf("get from a stopped server: %+v", r)
		}
		if errors.Is(r.Err, ErrDown) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server never marked down; last error %v", r.Err)
		}
	}
	mc.Restart(t)
	h.loops.until(t, 5*time.Second, "the probe to bring the server back", func() bool {
		return h.pool.Stats().Servers[0].State == "up"
	})
	expect(t, "set after return", h.one(set("k", "v2")), tiers.StatusStored, "")
	expect(t, "get after return", h.one(get("k")), tiers.StatusHit, "v2")
	if st := h.pool.Stats(); st.Total.MarkedDown != 1 || st.Total.Reconnects == 0 {
		t.Errorf("stats: %+v", st.Total)
	}
}

func TestPoolRehashOnDown(t *testing.T) {
	a, b := memcachedtest.Start(t), memcachedtest.Start(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: a.Addr}, {Addr: b.Addr}}, RehashOnDown: true, ProbeInterval: time.Hour}, 0)
	var onB string
	for i := 0; onB == ""; i++ {
		if k := fmt.Sprint("key", i); h.pool.ServerFor([]byte(k)) == b.Addr {
			onB = k
		}
	}
	b.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for h.pool.Stats().Total.MarkedDown == 0 {
		h.one(get(onB))
		if time.Now().After(deadline) {
			t.Fatal("b never marked down")
		}
	}
	expect(t, "set rehashed", h.one(set(onB, "moved")), tiers.StatusStored, "")
	expect(t, "get rehashed", h.one(get(onB)), tiers.StatusHit, "moved")
	raw, _ := memcachedtest.Exchange(a.Addr, []byte("mg "+onB+" v\r\n"), 300*time.Millisecond)
	if !bytes.HasPrefix(raw, []byte("VA 5")) {
		t.Errorf("the down server's key did not land on the other server: %q", raw)
	}
}

func TestPoolSetServers(t *testing.T) {
	a, b, c := memcachedtest.Start(t), memcachedtest.Start(t), memcachedtest.Start(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: a.Addr}, {Addr: b.Addr}}}, 0)
	keys := make([]string, 300)
	var reqs []tiers.Request
	for i := range keys {
		keys[i] = fmt.Sprint("key", i)
		reqs = append(reqs, set(keys[i], keys[i]))
	}
	h.run(reqs...)
	before := h.pool.ShardMap()
	if err := h.pool.SetServers([]Server{{Addr: a.Addr}, {Addr: b.Addr}, {Addr: c.Addr}}); err != nil {
		t.Fatal(err)
	}
	after := h.pool.ShardMap()
	for sh := 0; sh < after.Shards(); sh++ {
		if before.OwnerAddr(sh) != after.OwnerAddr(sh) && after.OwnerAddr(sh) != c.Addr {
			t.Fatalf("shard %d moved between old servers", sh)
		}
	}
	// Keys that stayed are still served; keys that moved miss on c.
	reqs = reqs[:0]
	for _, k := range keys {
		reqs = append(reqs, get(k))
	}
	moved := 0
	for i, cl := range h.run(reqs...) {
		if h.pool.ServerFor([]byte(keys[i])) == c.Addr {
			moved++
			expect(t, "moved key", &cl.op.Res, tiers.StatusMiss, "")
		} else {
			expect(t, "kept key", &cl.op.Res, tiers.StatusHit, keys[i])
		}
	}
	if moved < 50 || moved > 150 {
		t.Errorf("%d of 300 keys moved to the third server, want about 100", moved)
	}
	// Removing a drops its connection; its keys go to b and c.
	if err := h.pool.SetServers([]Server{{Addr: b.Addr}, {Addr: c.Addr}}); err != nil {
		t.Fatal(err)
	}
	h.run(set("after", "x"))
	expect(t, "after removal", h.one(get("after")), tiers.StatusHit, "x")
	if n := len(h.pool.Stats().Servers); n != 2 {
		t.Errorf("%d servers in stats, want 2", n)
	}
}

func TestPoolNotStartedAndClosed(t *testing.T) {
	l := newTestLoops(1)
	p, err := New(Config{Servers: []Server{{Addr: "127.0.0.1:1"}}}, l)
	if err != nil {
		t.Fatal(err)
	}
	c := newCall(get("k"))
	p.Do(&c.op)
	if !c.done || !errors.Is(c.op.Res.Err, ErrNotStarted) {
		t.Errorf("before Start: %+v", c.op.Res)
	}
	l.start()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	c = newCall(get("k"))
	p.Do(&c.op)
	if !c.done || !errors.Is(c.op.Res.Err, ErrClosed) {
		t.Errorf("after Close: %+v", c.op.Res)
	}
	c = newCall(get("k"))
	c.op.Loop = 5
	p2, _ := New(Config{Servers: []Server{{Addr: "127.0.0.1:1"}}}, l)
	p2.Start()
	defer p2.Close()
	p2.Do(&c.op)
	if !errors.Is(c.op.Res.Err, ErrBadLoop) {
		t.Errorf("loop 5 of 1: %+v", c.op.Res)
	}
}

// TestPoolDialFailure: a server nobody listens on fails the queued
// requests with ErrUnreachable, backs off, and is marked down.
func TestPoolDialFailure(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", memcachedtest.FreePort(t))
	h := newHarness(t, Config{Servers: []Server{{Addr: addr}}, ProbeInterval: time.Hour}, 0)
	r := h.one(get("k"))
	if !errors.Is(r.Err, ErrUnreachable) {
		t.Fatalf("first request: %v", r.Err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !errors.Is(h.one(get("k")).Err, ErrDown) {
		if time.Now().After(deadline) {
			t.Fatal("never marked down")
		}
	}
}

// TestPoolFlushAllFansOut: flush_all reaches every server and completes
// when all answered; a down server's failure is reported.
func TestPoolFlushAllFansOut(t *testing.T) {
	a, b := memcachedtest.Start(t), memcachedtest.Start(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: a.Addr}, {Addr: b.Addr}}, ProbeInterval: time.Hour}, 0)
	var reqs []tiers.Request
	for i := range 40 {
		reqs = append(reqs, set(fmt.Sprint("f", i), "x"))
	}
	h.run(reqs...)
	for _, mc := range []*memcachedtest.Server{a, b} {
		raw, _ := memcachedtest.Exchange(mc.Addr, []byte("stats\r\n"), 300*time.Millisecond)
		if bytes.Contains(raw, []byte("STAT curr_items 0\r\n")) {
			t.Fatalf("%s holds no item before the flush", mc.Addr)
		}
	}
	expect(t, "flush_all", h.one(tiers.Request{Kind: tiers.KindFlush}), tiers.StatusStored, "")
	for _, mc := range []*memcachedtest.Server{a, b} {
		raw, _ := memcachedtest.Exchange(mc.Addr, []byte("mg f0 v\r\nmg f1 v\r\nmg f2 v\r\nmg f3 v\r\n"), 300*time.Millisecond)
		if string(raw) != "EN\r\nEN\r\nEN\r\nEN\r\n" {
			t.Errorf("%s after flush_all: %q", mc.Addr, raw)
		}
	}
	// With b down the flush still reaches a, and fails naming b.
	b.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for h.pool.Stats().Total.MarkedDown == 0 {
		h.one(tiers.Request{Kind: tiers.KindFlush})
		if time.Now().After(deadline) {
			t.Fatal("b never marked down")
		}
	}
	r := h.one(tiers.Request{Kind: tiers.KindFlush})
	if r.Status != tiers.StatusError || r.Err.Error() != "backend "+b.Addr+" is down" {
		t.Errorf("flush_all with b down: %v %v", r.Status, r.Err)
	}
}
