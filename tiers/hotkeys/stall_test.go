package hotkeys

import (
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// stamps records the stall stamp of each request passing to a tier.
type stamps struct {
	tiers.Tier
	seen []stamped
}

type stamped struct {
	kind  tiers.Kind
	stall uint64
}

func (s *stamps) Do(op *tiers.Op) {
	s.seen = append(s.seen, stamped{op.Req.Kind, op.Stall})
	s.Tier.Do(op)
}

// take returns the stamps seen of kind k, and forgets everything seen.
func (s *stamps) take(k tiers.Kind) []uint64 {
	var out []uint64
	for _, e := range s.seen {
		if e.kind == k {
			out = append(out, e.stall)
		}
	}
	s.seen = nil
	return out
}

// Every round of a client's request carries its stall stamp
// (tiers.Op.Stall), so the pool holds a write a fan issues after waiting
// for an earlier round across a stall; the deletes that complete a write
// the inner tier already made (copies, a counter's parts after an add)
// carry none: holding them would leave those older than the write.
func TestRoundsCarryTheClientsStallStamp(t *testing.T) {
	l1s, l2s := twoStores(t)
	l1, inner := &stamps{Tier: l1s}, &stamps{Tier: l2s}
	tr, err := New(Config{Rules: []Rule{
		{Prefix: "n:", Kind: KindCounter, Split: 2},
		{Prefix: "r:", Kind: KindRead, Split: 2},
	}, Now: func() int64 { return 0 }, Sample: 1}, Deps{Inner: inner, L1: l1, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	const stamp = 7
	do := func(req tiers.Request) tiers.Result {
		t.Helper()
		done := false
		op := &tiers.Op{Req: req, Done: func(*tiers.Op) { done = true }, Stall: stamp}
		tr.Do(op)
		if !done {
			t.Fatalf("%+v: not done within Do", req)
		}
		return op.Res
	}
	all := func(what string, got []uint64, want uint64) {
		t.Helper()
		if len(got) == 0 {
			t.Fatalf("%s: none seen", what)
		}
		for _, s := range got {
			if s != want {
				t.Fatalf("%s: stamps %v, want every one %d", what, got, want)
			}
		}
	}

	for range 4 {
		do(tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("n:1"), Delta: 5, Vivify: true})
	}
	inner.seen = nil
	// decr reads every part, then decrements those holding value: a
	// round of writes issued after waiting for the reads.
	if r := do(tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeDecr, Key: []byte("n:1"), Delta: 12}); r.Status == tiers.StatusError {
		t.Fatalf("decr: %+v", r)
	}
	all("a decr's writes after its reads", inner.take(tiers.KindArith), stamp)

	do(tiers.Request{Kind: tiers.KindDelete, Key: []byte("n:2")})
	inner.seen = nil
	// add stores the base, then deletes the parts it replaced.
	if r := do(tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeAdd, Key: []byte("n:2"), Value: []byte("3")}); r.Status != tiers.StatusStored {
		t.Fatalf("add: %+v", r)
	}
	seen := inner.seen
	all("an add at the base", (&stamps{seen: seen}).take(tiers.KindSet), stamp)
	all("the deletes of the parts an add replaced", inner.take(tiers.KindDelete), 0)

	if r := do(tiers.Request{Kind: tiers.KindSet, Key: []byte("r:1"), Value: []byte("v")}); r.Status != tiers.StatusStored {
		t.Fatalf("set of a read key: %+v", r)
	}
	all("a read key's write", inner.take(tiers.KindSet), stamp)
	all("the deletes of its copies", l1.take(tiers.KindDelete), 0)
}
