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
	if !c.join(1, 5) {
		t.Fatal("the first incr waited with nothing in flight")
	}
	if c.idle() {
		t.Fatal("idle with an incr in flight")
	}
	for m, d := range []uint64{2, 3, 4} {
		if c.join(m+2, d) {
			t.Fatalf("member %d went alone while an incr was in flight", m+2)
		}
	}
	next, sum := c.next(nil)
	if len(next) != 3 || next[0] != 2 || next[2] != 4 || sum != 9 {
		t.Fatalf("next = %v, %d; want [2 3 4], 9", next, sum)
	}
	// The three are in flight: a newcomer waits for them.
	if c.join(5, math.MaxUint64) || c.join(6, 3) {
		t.Fatal("a newcomer went alone while a combined incr was in flight")
	}
	// The sum wraps at 2^64, as memcached's incr does: one incr of 2
	// leaves a counter where +MaxUint64 then +3 would.
	next, sum = c.next(next[:0])
	if len(next) != 2 || next[0] != 5 || sum != 2 {
		t.Fatalf("next = %v, %d; want [5 6], 2", next, sum)
	}
	if next, sum = c.next(next[:0]); len(next) != 0 || sum != 0 || !c.idle() {
		t.Fatalf("next with nothing waiting = %v, %d, idle %v", next, sum, c.idle())
	}
	if !c.join(7, 1) {
		t.Fatal("an idle combiner made an incr wait")
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
// while one is in flight go to the server as one incr of their sum; each
// is answered from the view in issue order, once the operation that
// carried it completed, and shares its outcome.
func TestCombinedIncrs(t *testing.T) {
	store, err := embedded.New(embedded.Config{MaxBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	h := &held{store: store, pass: true}
	now := int64(time.Hour)
	rule := Rule{Prefix: "votes:", Kind: KindCounter, Split: 4, Reply: ReplyBounded, Staleness: 100 * time.Millisecond}
	tier, err := New(Config{Rules: []Rule{rule}, Now: func() int64 { return now }}, Deps{Inner: h, Loops: inline{}, Async: true})
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
			case want[i] == "" || want[i] == "-":
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
	count := func(want uint64) {
		t.Helper()
		h.pass = true
		op := &tiers.Op{Req: tiers.Request{Kind: tiers.KindGet, Key: []byte("votes:1"), WantValue: true, Text: true}, Done: func(*tiers.Op) {}}
		tier.Do(op)
		if string(op.Res.Value) != strconv.FormatUint(want, 10) {
			t.Fatalf("counter %q, want %d", op.Res.Value, want)
		}
	}
	settle := func() {
		for len(h.ops) > 0 {
			h.release(nil)
		}
	}
	setZero := func() {
		h.pass = true
		op := &tiers.Op{Req: tiers.Request{Kind: tiers.KindSet, Key: []byte("votes:1"), Value: []byte("0"), Text: true}, Done: func(*tiers.Op) {}}
		tier.Do(op)
	}
	setZero()
	expect("first incr (no view: exact)", []*call{send(1, false)}, "1")
	// Three more, one at a time: every part exists from then on.
	now += int64(time.Millisecond)
	expect("one at a time", []*call{send(1, false), send(1, false), send(1, false)}, "2", "3", "4")

	// Five incrs while one is in flight: the first goes alone, the four
	// others wait and then go as one incr of 2+3+4+5 = 14.
	h.pass, h.sent = false, nil
	cs := []*call{send(1, false), send(2, false), send(3, false), send(4, false), send(5, false)}
	if len(h.ops) != 1 || tier.Stats().BoundedCombined != 4 {
		t.Fatalf("%d operations in flight, %d combined; want 1, 4", len(h.ops), tier.Stats().BoundedCombined)
	}
	expect("nothing landed", cs, "", "", "", "", "")
	h.release(nil)
	expect("first landed", cs, "5", "", "", "", "")
	h.release(nil)
	expect("all landed", cs, "5", "7", "10", "14", "19")
	if len(h.ops) != 0 || len(h.sent) != 2 || h.sent[1] != 14 {
		t.Fatalf("%d operations left in flight, deltas sent %v; want 0, [1 14]", len(h.ops), h.sent)
	}
	count(19)

	// A failure reaches every member of the incr that failed, and nothing
	// is sent twice.
	h.pass, h.sent = false, nil
	cs = []*call{send(1, false), send(1, false), send(1, true)}
	h.release(nil)
	expect("first landed", cs, "20", "", "")
	h.release(errors.New("backend down"))
	expect("combined failed", cs, "20", "ERR", "-")
	if !cs[2].done || len(h.sent) != 2 || h.sent[1] != 2 {
		t.Fatalf("noreply member done %v, deltas sent %v; want [1 2]", cs[2].done, h.sent)
	}
	count(20)

	// noreply incrs combine too, and the sum wraps as memcached's incr:
	// +MaxUint64 then +1 is one incr of 0.
	h.pass = true
	expect("after a failure", []*call{send(1, false)}, "21")
	h.pass, h.sent = false, nil
	cs = []*call{send(1, false), send(math.MaxUint64, true), send(1, false)}
	settle()
	if len(h.sent) != 2 || h.sent[1] != 0 {
		t.Fatalf("deltas sent %v; want [1 0]", h.sent)
	}
	expect("wrapped", cs, "22", "-", "22")
	count(22)

	// A combined incr whose part is absent creates it holding the sum.
	setZero()
	expect("after a set (exact)", []*call{send(1, false)}, "1")
	h.pass, h.sent = false, nil
	now += int64(time.Millisecond)
	cs = []*call{send(1, false), send(2, false), send(3, false)}
	settle()
	expect("created", cs, "2", "4", "7")
	// Each: the incr, again with the reads (absent), the create.
	if fmt.Sprint(h.sent) != "[1 1 1 5 5 5]" {
		t.Fatalf("deltas sent %v; want [1 1 1 5 5 5]", h.sent)
	}
	count(7)
}
