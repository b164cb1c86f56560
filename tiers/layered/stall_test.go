package layered

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

// A client's legs carry its stall stamp (tiers.Op.Stall), so the pool
// under L2 holds an L2 write parked across a stall; the legs that complete
// a write or flush already made at L2, and promotions, are the tier's own
// work and carry none: holding them would leave L1 older than L2.
func TestLegsCarryTheClientsStallStamp(t *testing.T) {
	f := newFixture(t, Config{Threshold: 32})
	l1, l2 := &stamps{Tier: f.l1}, &stamps{Tier: f.l2}
	var err error
	if f.tier, err = New(Config{Threshold: 32, Rand: func() uint64 { return 0 }}, l1, l2, inline{}); err != nil {
		t.Fatal(err)
	}
	const stamp = 9
	run := func(req tiers.Request) {
		t.Helper()
		op := &tiers.Op{Req: req, Done: func(*tiers.Op) {}, Stall: stamp}
		f.tier.Do(op)
	}
	check := func(what string, s *stamps, want ...stamped) {
		t.Helper()
		if len(s.seen) != len(want) {
			t.Fatalf("%s: %+v, want %+v", what, s.seen, want)
		}
		for i := range want {
			if s.seen[i] != want[i] {
				t.Fatalf("%s: %+v, want %+v", what, s.seen, want)
			}
		}
		s.seen = nil
	}
	run(set("k", "v", 0))
	check("a write at L2", l2, stamped{tiers.KindSet, stamp})
	check("a write's L1 invalidation", l1, stamped{tiers.KindDelete, 0})
	run(get("k"))
	check("a read's legs and its promotion in L1", l1, stamped{tiers.KindGet, stamp}, stamped{tiers.KindSet, 0})
	check("a read at L2", l2, stamped{tiers.KindGet, stamp})
	run(tiers.Request{Kind: tiers.KindFlush})
	check("a flush at L2", l2, stamped{tiers.KindFlush, stamp})
	check("a flush's L1 leg", l1, stamped{tiers.KindFlush, 0})
}
