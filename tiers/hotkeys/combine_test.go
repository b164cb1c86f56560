package hotkeys

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
)

func TestCombiner(t *testing.T) {
	var c combiner[int]
	for m, d := range []uint64{5, 2, 3} {
		if first := c.join(m+1, d); first != (m == 0) {
			t.Fatalf("member %d: first of the round %v", m+1, first)
		}
	}
	got, sum := c.take(nil)
	if fmt.Sprint(got) != "[1 2 3]" || sum != 10 {
		t.Fatalf("take = %v, %d; want [1 2 3], 10", got, sum)
	}
	// A new round; the sum wraps at 2^64, as memcached's incr does: one
	// incr of 2 leaves a counter where +MaxUint64 then +3 would.
	if !c.join(4, math.MaxUint64) || c.join(5, 3) {
		t.Fatal("the first of a new round was not told so")
	}
	if got, sum = c.take(got[:0]); fmt.Sprint(got) != "[4 5]" || sum != 2 {
		t.Fatalf("take = %v, %d; want [4 5], 2", got, sum)
	}
	if got, sum = c.take(got[:0]); len(got) != 0 || sum != 0 {
		t.Fatalf("take of an empty round = %v, %d", got, sum)
	}
}

// deferred is the executor of a test that plays the event loop: what is
// run waits until the test ends the round.
type deferred struct{ fns []func() }

func (d *deferred) Run(_ int, fn func()) { d.fns = append(d.fns, fn) }

func (d *deferred) endRound() {
	for len(d.fns) > 0 {
		fn := d.fns[0]
		d.fns = d.fns[1:]
		fn()
	}
}

// held is an inner tier that keeps every operation until the test
// releases it (served by an embedded store, or failed), as a memcached
// pool answers later; with pass set it serves at once.
type held struct {
	store *embedded.Store
	ops   []*tiers.Op
	pass  bool
	sent  []uint64 // the delta of every incr it was given
}

func (h *held) Do(op *tiers.Op) {
	if op.Req.Kind == tiers.KindArith && op.Req.Mode == tiers.ModeIncr {
		h.sent = append(h.sent, op.Req.Delta)
	}
	if h.pass {
		h.store.Do(op)
		return
	}
	h.ops = append(h.ops, op)
}

func (h *held) Phase(*tiers.Request) uint8 { return 0 }

// release serves (or, with err, fails) every operation held now.
func (h *held) release(err error) {
	ops := h.ops
	h.ops = nil
	for _, op := range ops {
		if err != nil {
			op.Res.Reset()
			op.Res.Status, op.Res.Err = tiers.StatusError, err
			op.Done(op)
			continue
		}
		h.store.Do(op)
	}
}

// TestCombinedIncrs: incrs of a counter under a bounded rule that arrive
// in one round of the event loop go to the server as one incr of their
// sum, once the round ends; each is answered from the view in issue
// order, once that operation completed, and shares its outcome.
func TestCombinedIncrs(t *testing.T) {
	store, err := embedded.New(embedded.Config{MaxBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	h := &held{store: store, pass: true}
	ex := &deferred{}
	now := int64(time.Hour)
	rule := Rule{Prefix: "votes:", Kind: KindCounter, Split: 4, Reply: ReplyBounded, Staleness: 100 * time.Millisecond}
	tier, err := New(Config{Rules: []Rule{rule}, Now: func() int64 { return now }}, Deps{Inner: h, Loops: ex, Async: true})
	if err != nil {
		t.Fatal(err)
	}
	type call struct {
		op   *tiers.Op
		done bool
	}
	send := func(d uint64, noreply bool) *call {
		c := &call{}
		c.op = &tiers.Op{Req: tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("votes:1"),
			Delta: d, Text: true, NoReply: noreply}, Done: func(*tiers.Op) { c.done = true }}
		tier.Do(c.op)
		return c
	}
	expect := func(what string, cs []*call, want ...string) {
		t.Helper()
		for i, c := range cs {
			switch {
			case want[i] == "" && c.done:
				t.Fatalf("%s: call %d answered early: %v %q", what, i, c.op.Res.Status, c.op.Res.Value)
			case want[i] == "" || (want[i] == "-" && c.done):
			case !c.done:
				t.Fatalf("%s: call %d not answered", what, i)
			case want[i] == "ERR":
				if c.op.Res.Status != tiers.StatusError {
					t.Fatalf("%s: call %d: %v, want the error", what, i, c.op.Res.Status)
				}
			case c.op.Res.Status != tiers.StatusStored || string(c.op.Res.Value) != want[i]:
				t.Fatalf("%s: call %d: %v %q, want %s", what, i, c.op.Res.Status, c.op.Res.Value, want[i])
			}
		}
	}
	do := func(req tiers.Request) tiers.Result {
		h.pass = true
		op := &tiers.Op{Req: req, Done: func(*tiers.Op) {}}
		tier.Do(op)
		ex.endRound()
		return op.Res
	}
	count := func(want uint64) {
		t.Helper()
		r := do(tiers.Request{Kind: tiers.KindGet, Key: []byte("votes:1"), WantValue: true, Text: true})
		if string(r.Value) != strconv.FormatUint(want, 10) {
			t.Fatalf("counter %q, want %d", r.Value, want)
		}
	}
	settle := func() {
		for len(h.ops) > 0 {
			h.release(nil)
		}
	}
	setZero := func() { do(tiers.Request{Kind: tiers.KindSet, Key: []byte("votes:1"), Value: []byte("0"), Text: true}) }
	setZero()
	expect("first incr (no view: exact)", []*call{send(1, false)}, "1")
	// Three more, one round each: every part exists from then on.
	now += int64(time.Millisecond)
	for i := 2; i <= 4; i++ {
		c := send(1, false)
		ex.endRound()
		expect("one a round", []*call{c}, strconv.Itoa(i))
	}

	// Five incrs in one round: nothing is sent before the round ends,
	// then one incr of 1+2+3+4+5 = 15.
	h.pass, h.sent = false, nil
	cs := []*call{send(1, false), send(2, false), send(3, false), send(4, false), send(5, false)}
	if len(h.ops) != 0 {
		t.Fatalf("%d operations sent before the round ended", len(h.ops))
	}
	ex.endRound()
	if len(h.ops) != 1 || fmt.Sprint(h.sent) != "[15]" || tier.Stats().BoundedCombined != 4 {
		t.Fatalf("%d operations in flight, deltas sent %v, %d combined; want 1, [15], 4", len(h.ops), h.sent, tier.Stats().BoundedCombined)
	}
	expect("nothing landed", cs, "", "", "", "", "")
	h.release(nil)
	expect("all landed", cs, "5", "7", "10", "14", "19")
	count(19)

	// A failure reaches every member, and nothing is sent twice.
	h.pass, h.sent = false, nil
	cs = []*call{send(1, false), send(1, false), send(1, true)}
	ex.endRound()
	h.release(errors.New("backend down"))
	expect("combined failed", cs, "ERR", "ERR", "-")
	if !cs[2].done || len(h.ops) != 0 || fmt.Sprint(h.sent) != "[3]" {
		t.Fatalf("noreply member done %v, %d in flight, deltas sent %v; want [3]", cs[2].done, len(h.ops), h.sent)
	}
	count(19)

	// noreply incrs combine too, and the sum wraps as memcached's incr:
	// +1, +MaxUint64, +1 is one incr of 1.
	h.pass, h.sent = false, nil
	cs = []*call{send(1, false), send(math.MaxUint64, true), send(1, false)}
	ex.endRound()
	settle()
	if fmt.Sprint(h.sent) != "[1]" {
		t.Fatalf("deltas sent %v; want [1]", h.sent)
	}
	expect("wrapped", cs, "20", "-", "20")
	count(20)

	// A combined incr whose part is absent creates it holding the sum.
	setZero()
	expect("after a set (exact)", []*call{send(1, false)}, "1")
	h.pass, h.sent = false, nil
	now += int64(time.Millisecond)
	cs = []*call{send(1, false), send(2, false), send(3, false)}
	ex.endRound()
	settle()
	expect("created", cs, "2", "4", "7")
	// The incr, again with the reads (absent), the create.
	if fmt.Sprint(h.sent) != "[6 6 6]" {
		t.Fatalf("deltas sent %v; want [6 6 6]", h.sent)
	}
	count(7)
}
