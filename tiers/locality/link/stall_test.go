package link

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/memcached"
)

// stepLoops is one event loop run by the test goroutine: Attach and Run
// queue events, step runs them, each followed by FlushLoop as the proxy
// does. Its connections record what is written and never answer.
type stepLoops struct {
	events chan func()
	users  []memcached.User
}

type recConn struct {
	out    bytes.Buffer
	closed bool
}

func (c *recConn) Peek(int) ([]byte, error)    { return nil, nil }
func (c *recConn) Discard(int) (int, error)    { return 0, nil }
func (c *recConn) Write(b []byte) (int, error) { return c.out.Write(b) }
func (c *recConn) Close() error                { c.closed = true; return nil }

// startStepped starts a client whose one loop runs only when the test
// steps it, with one peer "b" on a listener the test accepts on; prep,
// when not nil, sets before Start what the test drives (its stall
// detector).
func startStepped(t *testing.T, cfg Config, prep func(*Client)) (*Client, *stepLoops, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	loops := &stepLoops{events: make(chan func(), 1024)}
	cfg.Peers = map[string]string{"b": ln.Addr().String()}
	c, err := New(cfg, loops)
	if err != nil {
		t.Fatal(err)
	}
	if prep != nil {
		prep(c)
	}
	c.Start()
	t.Cleanup(func() {
		go func() { // Close asks the loop to abort
			for fn := range loops.events {
				fn()
			}
		}()
		_ = c.Close()
	})
	return c, loops, ln
}

func (l *stepLoops) NumLoops() int { return 1 }
func (l *stepLoops) Run(_ int, fn func()) {
	l.events <- fn
}
func (l *stepLoops) Join(u memcached.User) error {
	l.users = append(l.users, u)
	return nil
}
func (l *stepLoops) Attach(_ context.Context, _ int, nc net.Conn, h memcached.Handler) error {
	rc := &recConn{}
	l.events <- func() { _ = nc.Close(); h.OnOpen(rc) }
	return nil
}

// until runs queued events (the ticker's among them) until cond holds,
// for up to 5s.
func (l *stepLoops) until(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case fn := <-l.events:
			fn()
			l.flush()
		case <-deadline:
			t.Fatal("condition not reached")
		}
	}
}

func (l *stepLoops) flush() {
	for _, u := range l.users {
		u.FlushLoop(0)
	}
}

// A forwarded write queued but unsent at a stall (the connection still
// dialling, or open with the round not yet flushed) is failed with
// stall.ErrHeld and never written; the read queued beside it is written;
// a write queued after the round that saw the stall is written.
func TestAForwardUnsentAtAStallIsNeverSent(t *testing.T) {
	d := stall.New(stall.Threshold, stall.Reading{Mono: stall.Now()})
	c, loops, _ := startStepped(t, Config{}, func(c *Client) { c.stall = d })
	var last int64
	declare := func() {
		last = max(last, stall.Now()) + 2*int64(stall.Threshold)
		if !d.Beat(stall.Reading{Mono: last}) {
			t.Fatal("no stall declared")
		}
	}
	send := func(req tiers.Request) *tiers.Op {
		op := &tiers.Op{Req: req, Done: func(*tiers.Op) {}}
		op.Res.Status = tiers.StatusHit // not yet done
		c.Send(0, op, linkproto.Token{Epoch: 5})
		return op
	}
	set := func(k, v string) tiers.Request {
		return tiers.Request{Kind: tiers.KindSet, Key: []byte(k), Value: []byte(v)}
	}
	get := func(k string) tiers.Request {
		return tiers.Request{Kind: tiers.KindGet, Key: []byte(k), WantValue: true}
	}
	held := func(what string, op *tiers.Op) {
		t.Helper()
		if op.Res.Status != tiers.StatusError || !errors.Is(op.Res.Err, stall.ErrHeld) {
			t.Fatalf("%s: %+v, want failed with ErrHeld", what, op.Res)
		}
	}

	// Queued while the connection dials; the stall comes before it opens.
	w1, _ := send(set("k", "v1")), send(get("k"))
	declare()
	loops.flush()
	pc := c.lstates[0].conns[0]
	loops.until(t, func() bool { return pc.conn != nil }) // opens; the round's flush writes
	held("a write queued while dialling", w1)
	rc := pc.conn.(*recConn)
	if out := rc.out.String(); out != "mg k v Oe5\r\n" {
		t.Fatalf("written %q, want only the read", out)
	}

	// Open: queued in a round whose flush comes after a stall.
	w2, _ := send(set("k", "v2")), send(get("j"))
	declare()
	loops.flush()
	held("a write queued before the stall", w2)
	if out := rc.out.String(); out != "mg k v Oe5\r\nmg j v Oe5\r\n" {
		t.Fatalf("written %q, want the two reads", out)
	}

	// After the round that saw the stall, writes go out.
	w3 := send(set("k", "v3"))
	loops.flush()
	if w3.Res.Status == tiers.StatusError {
		t.Fatalf("a write after the stall: %+v", w3.Res)
	}
	if out := rc.out.String(); !bytes.Contains([]byte(out), []byte("ms k 2 Oe5")) {
		t.Fatalf("written %q, want the write after the stall", out)
	}
	if st := c.Stats(); st.Held != 2 {
		t.Fatalf("Held = %d, want 2", st.Held)
	}
}

// A request a locality task parked across a stall (a lookup, a migration
// step) reaches Send after the round that saw it: a write stamped with an
// older generation (tiers.Op.Stall) is failed at once and never written;
// a read goes out, and so do a write read after the stall and an
// unstamped one.
func TestAForwardParkedAcrossAStallIsNeverSent(t *testing.T) {
	d := stall.New(stall.Threshold, stall.Reading{Mono: stall.Now()})
	c, loops, _ := startStepped(t, Config{Now: func() time.Time { return time.UnixMilli(0x1000) }}, func(c *Client) { c.stall = d })
	send := func(req tiers.Request, stamp func(*tiers.Op)) *tiers.Op {
		op := &tiers.Op{Req: req, Done: func(*tiers.Op) {}}
		op.Res.Status = tiers.StatusHit // not yet done
		stamp(op)
		c.Send(0, op, linkproto.Token{Epoch: 5})
		return op
	}
	before := d.Gen(stall.Now())
	readBefore := func(op *tiers.Op) { op.ReadUnder(before) }
	send(tiers.Request{Kind: tiers.KindGet, Key: []byte("warm")}, readBefore)
	pc := c.lstates[0].conns[0]
	loops.until(t, func() bool { return pc.conn != nil })
	if !d.Beat(stall.Reading{Mono: stall.Now() + 2*int64(stall.Threshold)}) {
		t.Fatal("no stall declared")
	}
	loops.flush() // the round that sees the stall: nothing unsent
	after := d.Gen(stall.Now())

	w := send(tiers.Request{Kind: tiers.KindSet, Key: []byte("k"), Value: []byte("v1")}, readBefore)
	if w.Res.Status != tiers.StatusError || !errors.Is(w.Res.Err, stall.ErrHeld) {
		t.Fatalf("a write parked across the stall: %+v; want failed with ErrHeld in Send", w.Res)
	}
	src := &tiers.Op{Req: tiers.Request{Kind: tiers.KindDelete, Key: []byte("k")}, Done: func(*tiers.Op) {}}
	src.ReadUnder(before)
	c.Send(0, src, linkproto.Token{Source: true})
	if !errors.Is(src.Res.Err, stall.ErrHeld) {
		t.Fatalf("a source delete parked across the stall: %+v; want ErrHeld", src.Res)
	}
	send(tiers.Request{Kind: tiers.KindGet, Key: []byte("r"), WantValue: true}, readBefore)
	send(tiers.Request{Kind: tiers.KindSet, Key: []byte("f"), Value: []byte("v2")}, func(op *tiers.Op) { op.ReadUnder(after) })
	send(tiers.Request{Kind: tiers.KindSet, Key: []byte("o"), Value: []byte("v3")}, func(*tiers.Op) {})
	loops.flush()
	// Writes carry their deadline: the clock's 0x1000 ms plus the 1s
	// timeout less the 100ms skew allowance, 0x1384; reads carry none.
	want := "mg warm Oe5\r\nmg r v Oe5\r\nms f 2 Oe5d1384\r\nv2\r\nms o 2 Oe5d1384\r\nv3\r\n"
	if out := pc.conn.(*recConn).out.String(); out != want {
		t.Fatalf("written %q, want %q", out, want)
	}
	if st := c.Stats(); st.Held != 2 {
		t.Fatalf("Held = %d, want 2", st.Held)
	}
	if got := string(c.AppendStats(nil)); got != "STAT strata_link_stall_held 2\r\n" {
		t.Fatalf("stats line %q", got)
	}
}
