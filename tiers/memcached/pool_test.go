package memcached

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
)

// harness is a started pool driven by testLoops on the test goroutine.
type harness struct {
	t     testing.TB
	pool  *Pool
	loops *testLoops
}

func newHarness(t testing.TB, cfg Config, maxRead int) *harness {
	t.Helper()
	l := newTestLoops(1)
	if maxRead > 0 {
		l.maxRead = maxRead
	}
	p, err := New(cfg, l)
	if err != nil {
		t.Fatal(err)
	}
	l.start()
	t.Cleanup(func() { _ = p.Close() })
	return &harness{t: t, pool: p, loops: l}
}

// call is one Op and whether it is done.
type call struct {
	op   tiers.Op
	done bool
}

func newCall(req tiers.Request) *call {
	c := &call{op: tiers.Op{Req: req}}
	c.op.Done = func(*tiers.Op) {
		if c.done {
			panic("Done called twice")
		}
		c.done = true
	}
	return c
}

// run issues the requests in one loop callback, flushes, and drives the
// loop until all are done.
func (h *harness) run(reqs ...tiers.Request) []*call {
	h.t.Helper()
	cs := make([]*call, len(reqs))
	for i, r := range reqs {
		cs[i] = newCall(r)
		h.pool.Do(&cs[i].op)
	}
	h.pool.FlushLoop(0)
	h.wait(cs...)
	return cs
}

func (h *harness) wait(cs ...*call) {
	h.t.Helper()
	h.loops.until(h.t, 5*time.Second, "replies", func() bool {
		for _, c := range cs {
			if !c.done {
				return false
			}
		}
		return true
	})
}

func (h *harness) one(r tiers.Request) *tiers.Result {
	h.t.Helper()
	return &h.run(r)[0].op.Res
}

func get(key string) tiers.Request {
	return tiers.Request{Kind: tiers.KindGet, Key: []byte(key), WantValue: true, WantFlags: true}
}

func set(key, value string) tiers.Request {
	return tiers.Request{Kind: tiers.KindSet, Key: []byte(key), Value: []byte(value)}
}

func expect(t testing.TB, what string, r *tiers.Result, st tiers.Status, value string) {
	t.Helper()
	if r.Status != st || (value != "" && string(r.Value) != value) {
		t.Errorf("%s: status %v value %q err %v; want %v %q", what, r.Status, r.Value, r.Err, st, value)
	}
}

func TestPoolRequestKinds(t *testing.T) {
	mc := memcachedtest.Start(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}, MaxItemSize: 2 << 20}, 0)

	expect(t, "get absent", h.one(get("k")), tiers.StatusMiss, "")
	r := h.one(tiers.Request{Kind: tiers.KindSet, Key: []byte("k"), Value: []byte("v1"), ClientFlags: 7, TTL: 100, WantCAS: true})
	expect(t, "set", r, tiers.StatusStored, "")
	g := h.one(tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), WantValue: true, WantFlags: true, WantCAS: true, WantTTL: true, WantSize: true})
	expect(t, "get", g, tiers.StatusHit, "v1")
	if g.ClientFlags != 7 || g.TTL < 98 || g.TTL > 100 || g.CAS == 0 || g.Size != 2 {
		t.Errorf("get facts: %+v", g)
	}
	cas := g.CAS

	// CAS: a stale token fails, the current one works.
	expect(t, "cas stale", h.one(tiers.Request{Kind: tiers.KindSet, Key: []byte("k"), Value: []byte("x"), HasCompareCAS: true, CompareCAS: cas + 1000}), tiers.StatusExists, "")
	expect(t, "cas ok", h.one(tiers.Request{Kind: tiers.KindSet, Key: []byte("k"), Value: []byte("v2"), HasCompareCAS: true, CompareCAS: cas}), tiers.StatusStored, "")
	expect(t, "cas absent", h.one(tiers.Request{Kind: tiers.KindSet, Key: []byte("nope"), Value: []byte("x"), HasCompareCAS: true, CompareCAS: 1}), tiers.StatusNotFound, "")

	// add / replace / append / prepend.
	expect(t, "add existing", h.one(tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeAdd, Key: []byte("k"), Value: []byte("x")}), tiers.StatusNotStored, "")
	expect(t, "add new", h.one(tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeAdd, Key: []byte("a"), Value: []byte("1")}), tiers.StatusStored, "")
	expect(t, "replace absent", h.one(tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeReplace, Key: []byte("nope"), Value: []byte("x")}), tiers.StatusNotStored, "")
	expect(t, "append", h.one(tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeAppend, Key: []byte("k"), Value: []byte(">")}), tiers.StatusStored, "")
	expect(t, "prepend", h.one(tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModePrepend, Key: []byte("k"), Value: []byte("<")}), tiers.StatusStored, "")
	expect(t, "get joined", h.one(get("k")), tiers.StatusHit, "<v2>")

	// touch and gat: the TTL reported is the one after the touch.
	expect(t, "touch", h.one(tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), HasTTL: true, TTL: 5000}), tiers.StatusHit, "")
	gat := h.one(tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), HasTTL: true, TTL: 3000, WantValue: true, WantTTL: true})
	expect(t, "gat", gat, tiers.StatusHit, "<v2>")
	if gat.TTL < 2998 || gat.TTL > 3000 {
		t.Errorf("gat TTL %d, want about 3000", gat.TTL)
	}
	expect(t, "touch absent", h.one(tiers.Request{Kind: tiers.KindGet, Key: []byte("nope"), HasTTL: true, TTL: 5}), tiers.StatusMiss, "")

	// Arithmetic.
	h.one(set("n", "10"))
	incr := tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("n"), Delta: 5, WantValue: true}
	expect(t, "incr", h.one(incr), tiers.StatusStored, "15")
	decr := tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeDecr, Key: []byte("n"), Delta: 100, WantValue: true}
	expect(t, "decr floors at 0", h.one(decr), tiers.StatusStored, "0")
	incr.Key = []byte("nope")
	expect(t, "incr absent", h.one(incr), tiers.StatusMiss, "")
	incr.Key = []byte("k")
	expect(t, "incr non-numeric", h.one(incr), tiers.StatusNonNumeric, "")
	viv := tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("ctr"), Delta: 1, Vivify: true, VivifyTTL: 0, Initial: 42, WantValue: true}
	expect(t, "ma vivify", h.one(viv), tiers.StatusStored, "42")

	// Delete.
	expect(t, "delete", h.one(tiers.Request{Kind: tiers.KindDelete, Key: []byte("k")}), tiers.StatusStored, "")
	expect(t, "delete absent", h.one(tiers.Request{Kind: tiers.KindDelete, Key: []byte("k")}), tiers.StatusMiss, "")

	// Binary keys travel base64 and mean the same item either way.
	bin := "key with space\r\n"
	expect(t, "set binary key", h.one(set(bin, "b")), tiers.StatusStored, "")
	expect(t, "get binary key", h.one(get(bin)), tiers.StatusHit, "b")
	raw, _ := memcachedtest.Exchange(mc.Addr, []byte("mg a2V5IHdpdGggc3BhY2UNCg== b v\r\n"), 300*time.Millisecond)
	if !bytes.HasPrefix(raw, []byte("VA 1")) {
		t.Errorf("binary key not stored under its bytes: %q", raw)
	}

	// The meta machinery: vivify on miss hands out a win, a stale item
	// reports X and W.
	w := h.one(tiers.Request{Kind: tiers.KindGet, Key: []byte("viv"), Vivify: true, VivifyTTL: 30, WantValue: true})
	if w.Status != tiers.StatusHit || !w.Win {
		t.Errorf("mg N on a miss: %+v", w)
	}
	h.one(set("st", "old"))
	expect(t, "md I", h.one(tiers.Request{Kind: tiers.KindDelete, Key: []byte("st"), Invalidate: true}), tiers.StatusStored, "")
	st := h.one(tiers.Request{Kind: tiers.KindGet, Key: []byte("st"), WantValue: true, WantHit: true, WantLastAccess: true})
	if st.Status != tiers.StatusHit || !st.Stale || !st.Win {
		t.Errorf("stale item: %+v", st)
	}

	// Too large: refused locally above MaxItemSize, by memcached above -I.
	big := strings.Repeat("x", 1<<20+10)
	expect(t, "too large for memcached", h.one(set("big", big)), tiers.StatusTooLarge, "")
	huge := strings.Repeat("x", 2<<20+1)
	expect(t, "too large for the pool", h.one(set("big", huge)), tiers.StatusTooLarge, "")

	// Requests memcached could not parse never leave.
	long := tiers.Request{Kind: tiers.KindGet, Key: bytes.Repeat([]byte("k"), 251)}
	lr := h.one(long)
	var reqErr *RequestError
	if lr.Status != tiers.StatusError || !errors.As(lr.Err, &reqErr) {
		t.Errorf("251-byte key: %+v", lr)
	}

	// flush_all empties the server.
	expect(t, "flush_all", h.one(tiers.Request{Kind: tiers.KindFlush}), tiers.StatusStored, "")
	expect(t, "get after flush", h.one(get("a")), tiers.StatusMiss, "")

	st2 := h.pool.Stats()
	if st2.Total.Errors != 1 || st2.Total.Hits == 0 || st2.Total.Misses == 0 || st2.Servers[0].State != "up" {
		t.Errorf("stats after the tour: %+v", st2)
	}
}

// TestPoolSplitReplies delivers the server's bytes one at a time: every
// reply is cut at every possible point, and every request still gets its
// own reply.
func TestPoolSplitReplies(t *testing.T) {
	mc := memcachedtest.Start(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}}, 1)
	var reqs []tiers.Request
	for i := range 20 {
		v := strings.Repeat(fmt.Sprint(i%10), i*7)
		reqs = append(reqs, set(fmt.Sprint("k", i), v))
	}
	for _, c := range h.run(reqs...) {
		expect(t, "set", &c.op.Res, tiers.StatusStored, "")
	}
	reqs = reqs[:0]
	for i := range 25 {
		reqs = append(reqs, get(fmt.Sprint("k", i)))
	}
	for i, c := range h.run(reqs...) {
		if i >= 20 {
			expect(t, "get absent", &c.op.Res, tiers.StatusMiss, "")
			continue
		}
		want := strings.Repeat(fmt.Sprint(i%10), i*7)
		if c.op.Res.Status != tiers.StatusHit || string(c.op.Res.Value) != want {
			t.Errorf("get k%d: %v %q", i, c.op.Res.Status, c.op.Res.Value)
		}
	}
}

// TestPoolBatchesWrites: requests issued in one callback leave in one
// write, and replies come back paired in order.
func TestPoolBatchesWrites(t *testing.T) {
	mc := memcachedtest.Start(t, "-R", "1000")
	h := newHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}}, 0)
	h.one(get("warm")) // connect first
	before := h.pool.Stats().Total.Writes
	var reqs []tiers.Request
	for i := range 300 {
		reqs = append(reqs, set(fmt.Sprint("b", i), fmt.Sprint(i)))
		reqs = append(reqs, get(fmt.Sprint("b", i)))
	}
	for i, c := range h.run(reqs...) {
		if i%2 == 1 {
			expect(t, "get", &c.op.Res, tiers.StatusHit, fmt.Sprint(i/2))
		}
	}
	if w := h.pool.Stats().Total.Writes - before; w != 1 {
		t.Errorf("600 requests in one callback took %d writes, want 1", w)
	}
}

// blackHole accepts connections and never answers.
func blackHole(t *testing.T) (addr string, accepted chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	})
	return ln.Addr().String(), accepted
}

func TestPoolTimeout(t *testing.T) {
	addr, accepted := blackHole(t)
	const timeout = 100 * time.Millisecond
	h := newHarness(t, Config{Servers: []Server{{Addr: addr}}, RequestTimeout: timeout, FailureThreshold: 2, ProbeInterval: time.Hour}, 0)
	start := time.Now()
	cs := []*call{newCall(get("a")), newCall(get("b"))}
	for _, c := range cs {
		h.pool.Do(&c.op)
	}
	h.pool.FlushLoop(0)
	h.wait(cs...)
	took := time.Since(start)
	for _, c := range cs {
		if c.op.Res.Status != tiers.StatusError || !errors.Is(c.op.Res.Err, ErrTimeout) {
			t.Fatalf("request on a silent server: %+v", c.op.Res)
		}
	}
	// The pool measures time on a clock its ticker advances, so a request
	// can time out a tick early or late by the wall clock, and earlier
	// still when the scheduler starves the ticker, whose last tick, the
	// request's stamp, then lags the wall clock further: the lower bound
	// is half the timeout.
	if took < timeout/2 || took > timeout+h.pool.tick+500*time.Millisecond {
		t.Errorf("timed out after %v, want about %v", took, timeout)
	}
	// The connection was closed: the server sees EOF.
	srv := <-accepted
	_ = srv.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := srv.Read(make([]byte, 1024)); err != nil {
		t.Fatalf("reading the requests: %v", err)
	}
	buf := make([]byte, 1024)
	for {
		if _, err := srv.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the timed-out connection was not closed")
			}
			break
		}
	}
	// A second timeout reaches the threshold: the server is marked down
	// and its keys fail at once with its address in the error.
	c := newCall(get("a"))
	h.pool.Do(&c.op)
	h.pool.FlushLoop(0)
	h.wait(c)
	d := h.one(get("a"))
	if !errors.Is(d.Err, ErrDown) || d.Err.Error() != "backend "+addr+" is down" {
		t.Errorf("after two timeouts: %v, want %q", d.Err, "backend "+addr+" is down")
	}
	st := h.pool.Stats()
	if st.Total.Timeouts != 3 || st.Servers[0].State != "down" || st.Total.MarkedDown != 1 {
		t.Errorf("stats: %+v", st)
	}
}

// TestPoolWaitsAtBound: requests past MaxPendingPerConn wait rather than
// fail; when the server stops answering, the timeout of the written ones
// fails the waiting ones with them.
func TestPoolWaitsAtBound(t *testing.T) {
	addr, _ := blackHole(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: addr}}, MaxPendingPerConn: 4, RequestTimeout: 200 * time.Millisecond}, 0)
	var cs []*call
	for i := range 6 {
		c := newCall(get(fmt.Sprint(i)))
		cs = append(cs, c)
		h.pool.Do(&c.op)
	}
	for i, c := range cs {
		if c.done {
			t.Errorf("request %d failed at once: %+v", i, c.op.Res)
		}
	}
	h.pool.FlushLoop(0)
	h.wait(cs...)
	for i, c := range cs {
		if !errors.Is(c.op.Res.Err, ErrTimeout) {
			t.Errorf("request %d: %v, want a timeout", i, c.op.Res.Err)
		}
	}
	if got := h.pool.Stats().Total.Waits; got != 2 {
		t.Errorf("waits %d, want 2", got)
	}
}

// TestPoolSplitsLargeBatch: a batch of thousands of gets, far past both
// bounds of the connection, goes out in pieces as replies free room, and
// every request is answered, in order, by a real memcached; so is a small
// request issued behind it.
func TestPoolSplitsLargeBatch(t *testing.T) {
	mc := memcachedtest.Start(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}, MaxPendingPerConn: 100, MaxBufferedBytesPerConn: 64 << 10,
		MaxItemSize: 32 << 10, RequestTimeout: 5 * time.Second}, 0)
	var sets []tiers.Request
	for i := range 500 {
		sets = append(sets, set(fmt.Sprint("k", i), strings.Repeat("v", i)))
	}
	// 500 sets of up to 500 bytes pass the byte bound; 6,000 gets the count.
	for i, c := range h.run(sets...) {
		if c.op.Res.Status != tiers.StatusStored {
			t.Fatalf("set %d: %+v", i, c.op.Res)
		}
	}
	var cs []*call
	for i := range 6000 {
		c := newCall(get(fmt.Sprint("k", i%1000)))
		cs = append(cs, c)
		h.pool.Do(&c.op)
	}
	small := newCall(get("k7"))
	h.pool.Do(&small.op)
	h.pool.FlushLoop(0)
	h.wait(append(cs, small)...)
	for i, c := range cs {
		k := i % 1000
		want := tiers.StatusMiss
		if k < 500 {
			want = tiers.StatusHit
		}
		if c.op.Res.Status != want || (want == tiers.StatusHit && string(c.op.Res.Value) != strings.Repeat("v", k)) {
			t.Fatalf("get %d (k%d): %v %q %v, want %v", i, k, c.op.Res.Status, trunc(c.op.Res.Value), c.op.Res.Err, want)
		}
	}
	if small.op.Res.Status != tiers.StatusHit || string(small.op.Res.Value) != "vvvvvvv" {
		t.Errorf("the request behind the batch: %+v", small.op.Res)
	}
	st := h.pool.Stats().Total
	if st.Waits < 5000 || st.Errors != 0 {
		t.Errorf("waits %d errors %d; want most of the batch to have waited and nothing to fail", st.Waits, st.Errors)
	}
}

func trunc(b []byte) []byte { return b[:min(len(b), 40)] }
