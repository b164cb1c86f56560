package memcached

import (
	"errors"
	"testing"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// stallHarness is a harness whose pool reads detector d, and declare
// declares a stall on d as its heartbeat would on waking.
func stallHarness(t *testing.T, cfg Config) (h *harness, declare func()) {
	t.Helper()
	l := newTestLoops(1)
	p, err := New(cfg, l)
	if err != nil {
		t.Fatal(err)
	}
	d := stall.New(stall.Threshold, stall.Reading{Mono: stall.Now()})
	p.stall = d
	l.start()
	t.Cleanup(func() { _ = p.Close() })
	var last int64
	return &harness{t: t, pool: p, loops: l}, func() {
		last = max(last, stall.Now()) + 2*int64(stall.Threshold)
		if !d.Beat(stall.Reading{Mono: last}) {
			t.Fatal("no stall declared")
		}
	}
}

func heldThroughStall(r *tiers.Result) bool {
	return r.Status == tiers.StatusError && errors.Is(r.Err, stall.ErrHeld)
}

// Requests are queued in one callback, the process stalls before the
// round's flush: the writes among them, in the write buffer or in the
// backlog, are failed and never sent; the reads are sent, in order. A
// stall that came before a connection queued anything holds nothing.
func TestWritesUnsentAtAStallAreNeverSent(t *testing.T) {
	mc := memcachedtest.Start(t)
	h, declare := stallHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}, MaxPendingPerConn: 2})
	declare() // before the connection exists, and a round after it
	h.pool.FlushLoop(0)
	expect(t, "set after an old stall", h.one(set("k", "v0")), tiers.StatusStored, "")

	reqs := []tiers.Request{
		get("k"),       // q, unsent
		set("k", "v1"), // q, unsent
		{Kind: tiers.KindDelete, Key: []byte("k")}, // backlog
		get("k"), // backlog
	}
	cs := make([]*call, len(reqs))
	for i, r := range reqs {
		cs[i] = newCall(r)
		h.pool.Do(&cs[i].op)
	}
	declare()
	h.pool.FlushLoop(0)
	for _, i := range []int{1, 2} {
		if !cs[i].done || !heldThroughStall(&cs[i].op.Res) {
			t.Fatalf("write %d after the stall: done %v, %+v; want failed with ErrHeld at the flush", i, cs[i].done, cs[i].op.Res)
		}
	}
	h.wait(cs[0], cs[3])
	expect(t, "read queued before the stall", &cs[0].op.Res, tiers.StatusHit, "v0")
	expect(t, "read waiting before the stall", &cs[3].op.Res, tiers.StatusHit, "v0")

	expect(t, "set after the stall", h.one(set("k", "v3")), tiers.StatusStored, "")
	expect(t, "get after the stall", h.one(get("k")), tiers.StatusHit, "v3")
	if st := h.pool.Stats().Total; st.Held != 2 {
		t.Fatalf("Held = %d, want 2", st.Held)
	}
}

// A write queued while its connection dials, and unsent at a stall, is
// failed when the connection opens; the read beside it goes out.
func TestAWriteQueuedWhileDiallingIsHeldThroughAStall(t *testing.T) {
	mc := memcachedtest.Start(t)
	h, declare := stallHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}})
	w, r := newCall(set("k", "v1")), newCall(get("k"))
	h.pool.Do(&w.op)
	h.pool.Do(&r.op)
	declare()
	h.pool.FlushLoop(0)
	h.wait(w, r)
	if !heldThroughStall(&w.op.Res) {
		t.Fatalf("write queued while dialling: %+v; want ErrHeld", w.op.Res)
	}
	expect(t, "read queued while dialling", &r.op.Res, tiers.StatusMiss, "")
	expect(t, "the held write never ran", h.one(get("k")), tiers.StatusMiss, "")
}

// A request an upper tier parked across a stall reaches the pool after
// the round that saw it: a write stamped with an older generation
// (tiers.Op.Stall) is failed at once and never sent, a flush_all too; a
// read goes on, and so do a write read after the stall and the tier's own
// unstamped work.
func TestAWriteParkedInATierAcrossAStallIsNeverSent(t *testing.T) {
	mc := memcachedtest.Start(t)
	h, declare := stallHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}})
	expect(t, "set before the stall", h.one(set("k", "v0")), tiers.StatusStored, "")
	before := h.pool.stall.Gen(stall.Now())
	declare()
	h.pool.FlushLoop(0) // the round that sees the stall: nothing unsent
	after := h.pool.stall.Gen(stall.Now())

	parked := func(r tiers.Request, gen uint64) *call {
		c := newCall(r)
		c.op.ReadUnder(gen)
		return c
	}
	w := parked(set("k", "v1"), before)
	h.pool.Do(&w.op)
	if !w.done || !heldThroughStall(&w.op.Res) {
		t.Fatalf("a write parked across the stall: done %v, %+v; want failed with ErrHeld in Do", w.done, w.op.Res)
	}
	fl := parked(tiers.Request{Kind: tiers.KindFlush}, before)
	h.pool.Do(&fl.op)
	if !fl.done || !heldThroughStall(&fl.op.Res) {
		t.Fatalf("a flush_all parked across the stall: done %v, %+v; want ErrHeld", fl.done, fl.op.Res)
	}
	r := parked(get("k"), before)
	h.pool.Do(&r.op)
	h.pool.FlushLoop(0)
	h.wait(r)
	expect(t, "a read parked across the stall", &r.op.Res, tiers.StatusHit, "v0")

	fresh := parked(set("k", "v2"), after)
	h.pool.Do(&fresh.op)
	h.pool.FlushLoop(0)
	h.wait(fresh)
	expect(t, "a write read after the stall", &fresh.op.Res, tiers.StatusStored, "")
	expect(t, "the tier's own write", h.one(set("j", "own")), tiers.StatusStored, "")
	expect(t, "get after the stall", h.one(get("k")), tiers.StatusHit, "v2")
	if st := h.pool.Stats().Total; st.Held != 2 {
		t.Fatalf("Held = %d, want 2", st.Held)
	}
}

// A move's write in handoff deletes at A, then writes at B. When the
// process stalls while the delete is in flight, the write at B, the
// client's own, is its next step after the stall: it is held, never sent.
func TestAMoveStepAfterAStallIsHeld(t *testing.T) {
	mp := newMovePair(t)
	d := stall.New(stall.Threshold, stall.Reading{Mono: stall.Now()})
	mp.pool.stall = d
	for _, ls := range mp.pool.lstates {
		ls.stallGen = 0
	}
	mp.phase(shardmap.MoveHandoff)
	expect(t, "set before the stall", mp.one(set("k", "v0")), tiers.StatusStored, "")

	mp.a.Pause(t) // the delete at A waits there
	c := newCall(set("k", "v1"))
	c.op.ReadUnder(d.Gen(stall.Now()))
	mp.pool.Do(&c.op)
	mp.pool.FlushLoop(0)
	if !d.Beat(stall.Reading{Mono: stall.Now() + 2*int64(stall.Threshold)}) {
		t.Fatal("no stall declared")
	}
	mp.pool.FlushLoop(0)
	mp.a.Resume(t)
	mp.wait(c)
	if !heldThroughStall(&c.op.Res) {
		t.Fatalf("the write's step after the stall: %+v; want failed with ErrHeld", c.op.Res)
	}
	if v := valueAt(t, mp.b.Addr, "k"); v != "v0" {
		t.Fatalf("b holds %q after the held write, want v0", v)
	}
	if st := mp.pool.Stats().Total; st.Held != 1 {
		t.Fatalf("Held = %d, want 1", st.Held)
	}
}

// Batched tells the loops' owner whether a flush round would do anything,
// so that it can skip the others: a request queued and unsent, or a stall
// the loop has not seen yet (the round moves the loop's view, so a write
// queued after it goes out). A pool not started has no round to ask for.
func TestBatchedOnlyWhenARoundHasWork(t *testing.T) {
	idle, err := New(Config{Servers: []Server{{Addr: "127.0.0.1:1"}}}, newTestLoops(1))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if idle.Batched(0) {
		t.Fatal("a pool not started asks for a round")
	}
	mc := memcachedtest.Start(t)
	h, declare := stallHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}})
	expect(t, "first set", h.one(set("k", "v0")), tiers.StatusStored, "")
	if h.pool.Batched(0) || h.pool.Batched(1) || h.pool.Batched(-1) {
		t.Fatal("a round asked for with nothing queued, or on a loop that does not exist")
	}
	c := newCall(get("k"))
	h.pool.Do(&c.op)
	if !h.pool.Batched(0) {
		t.Fatal("no round asked for with a get queued")
	}
	h.pool.FlushLoop(0)
	if h.pool.Batched(0) {
		t.Fatal("a round asked for once the get was written")
	}
	h.wait(c)
	declare()
	if !h.pool.Batched(0) {
		t.Fatal("no round asked for after a stall the loop has not seen")
	}
	h.pool.FlushLoop(0)
	if h.pool.Batched(0) {
		t.Fatal("a round asked for after the loop saw the stall")
	}
	expect(t, "set after the stall was seen", h.one(set("k", "v1")), tiers.StatusStored, "")
}
