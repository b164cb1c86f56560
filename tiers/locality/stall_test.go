package locality

import (
	"errors"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// heldDir answers a lookup when the test says.
type heldDir struct {
	pending []func(loccache.Location, error)
}

func (d *heldDir) Resolve(_ string, _ bool, done func(loccache.Location, error)) {
	d.pending = append(d.pending, done)
}
func (*heldDir) Access(string, bool)   {}
func (*heldDir) Served(string)         {}
func (*heldDir) Fenced(time.Time) bool { return false }
func (d *heldDir) answer(l loccache.Location) {
	for _, done := range d.pending {
		done(l, nil)
	}
	d.pending = nil
}

// recLinks records what is sent over the link; one peer, "b".
type recLinks struct{ sent []*tiers.Op }

func (*recLinks) Peer(r string) int {
	if r == "b" {
		return 0
	}
	return -1
}
func (l *recLinks) Send(_ int, op *tiers.Op, _ linkproto.Token) { l.sent = append(l.sent, op) }
func (*recLinks) Stats() link.Stats                             { return link.Stats{} }

// recInner records what reaches the local tiers and answers stored.
type recInner struct {
	tiers.NoPhase
	got []*tiers.Op
}

func (in *recInner) Do(op *tiers.Op) {
	in.got = append(in.got, op)
	op.Res.Status = tiers.StatusStored
	op.Done(op)
}

// Every request a task sends for a client's write, after a location
// lookup or a migration step, carries the client's stall stamp, so the
// link client or the pool it reaches holds it when a stall came between
// (tiers.Op.Stall).
func TestATaskCarriesItsClientsStallStamp(t *testing.T) {
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	dir, links, inner := &heldDir{}, &recLinks{}, &recInner{}
	tr, err := New(Config{Region: "a"}, Deps{Inner: inner, Rules: rules, Directory: dir, Links: links, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	const readUnder, stallAfter = 4, 5
	write := func(key string) *tiers.Op {
		op := &tiers.Op{Req: tiers.Request{Kind: tiers.KindSet, Key: []byte(key), Value: []byte("v")}, Done: func(*tiers.Op) {}}
		op.ReadUnder(readUnder)
		tr.Do(op)
		return op
	}
	stamped := func(what string, op *tiers.Op) {
		t.Helper()
		if !op.HeldThrough(stallAfter) || op.HeldThrough(readUnder) {
			t.Errorf("%s: stamp %d, want the client's (read under generation %d)", what, op.Stall, readUnder)
		}
	}

	// A forward that waited for the lookup.
	write("u:{1}")
	dir.answer(loccache.Location{Owner: "b", Epoch: 3, State: loccache.Stable})
	if len(links.sent) != 1 {
		t.Fatalf("%d forwards, want 1", len(links.sent))
	}
	stamped("the forward after a lookup", links.sent[0])

	// A write migrating here: the delete at the source, then, after its
	// reply, the write in the local tiers.
	write("u:{2}")
	dir.answer(loccache.Location{Owner: "a", Epoch: 7, State: loccache.Migrating, Source: "b"})
	if len(links.sent) != 2 {
		t.Fatalf("%d link requests, want the source delete", len(links.sent))
	}
	del := links.sent[1]
	stamped("the source delete", del)
	del.Res.Status = tiers.StatusStored
	del.Done(del)
	if len(inner.got) != 1 {
		t.Fatalf("%d local requests, want the write", len(inner.got))
	}
	stamped("the local write after the source delete", inner.got[0])
}

// A write a task hands to the local tiers after waiting through a stall
// (for a lookup, or for the migration's source delete) is failed with
// stall.ErrHeld by the router itself: an embedded store, unlike a pool,
// applies what it is handed. A read goes on, and so does a write read
// after the stall.
func TestALocalWriteParkedAcrossAStallIsHeld(t *testing.T) {
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	dir, links, inner := &heldDir{}, &recLinks{}, &recInner{}
	tr, err := New(Config{Region: "a"}, Deps{Inner: inner, Rules: rules, Directory: dir, Links: links, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	d := stall.New(stall.Threshold, stall.Reading{Mono: stall.Now()})
	tr.stall = d
	before := d.Gen(stall.Now())
	op := func(req tiers.Request, gen uint64) *tiers.Op {
		o := &tiers.Op{Req: req, Done: func(*tiers.Op) {}}
		o.ReadUnder(gen)
		return o
	}
	set := func(key string) tiers.Request {
		return tiers.Request{Kind: tiers.KindSet, Key: []byte(key), Value: []byte("v")}
	}
	held := func(what string, o *tiers.Op) {
		t.Helper()
		if o.Res.Status != tiers.StatusError || !errors.Is(o.Res.Err, stall.ErrHeld) {
			t.Errorf("%s: %+v, want failed with ErrHeld", what, o.Res)
		}
	}

	w, r := op(set("u:{1}:a"), before), op(tiers.Request{Kind: tiers.KindGet, Key: []byte("u:{1}:b")}, before)
	tr.Do(w)
	tr.Do(r)
	if !d.Beat(stall.Reading{Mono: stall.Now() + 2*int64(stall.Threshold)}) {
		t.Fatal("no stall declared")
	}
	after := d.Gen(stall.Now())
	dir.answer(loccache.Location{Owner: "a", Epoch: 3, State: loccache.Stable})
	held("a local write after a lookup through the stall", w)
	if len(inner.got) != 1 || inner.got[0] != r {
		t.Fatalf("the local tiers got %d requests, want the read alone", len(inner.got))
	}
	fresh := op(set("u:{1}:c"), after)
	tr.Do(fresh)
	if len(inner.got) != 2 || inner.got[1] != fresh {
		t.Fatal("a write read after the stall did not reach the local tiers")
	}

	// Migrating here, a write waits for the delete at the source: the
	// stall comes before its reply, so the local write is never made.
	inner.got = nil
	m := op(set("u:{2}"), after)
	tr.Do(m)
	dir.answer(loccache.Location{Owner: "a", Epoch: 7, State: loccache.Migrating, Source: "b"})
	if len(links.sent) == 0 {
		t.Fatal("no source delete")
	}
	del := links.sent[len(links.sent)-1]
	if !d.Beat(stall.Reading{Mono: stall.Now() + 4*int64(stall.Threshold)}) {
		t.Fatal("no second stall declared")
	}
	del.Res.Status = tiers.StatusStored
	del.Done(del)
	held("a migrating write's local step after the stall", m)
	if len(inner.got) != 0 {
		t.Fatalf("the local tiers got %d requests, want none", len(inner.got))
	}
}
