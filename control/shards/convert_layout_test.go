package shards

import (
	"testing"

	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// TestConvertToLayoutLost: in a conversion between layouts
// (LeaderConfig.ToLayout) a conversion whose destination member dies or
// leaves stays converted past prepare (the new layout's servers hold what
// its handoff wrote), its destination following the failover's owner; in
// prepare it goes back to the layout, as in a conversion to a map.
func TestConvertToLayoutLost(t *testing.T) {
	cfg := decideCfg()
	cfg.Compat, cfg.ToLayout = true, true
	for _, tc := range []struct {
		name     string
		phase    Phase
		onLayout bool // shard 1 after the round
	}{
		{"handoff", Handoff, false},
		{"settle", Settle, false},
		{"prepare", Prepare, true},
	} {
		p := convertStart()
		p.Phase, p.Layout = tc.phase, []int{2, 3, 4, 5, 6, 7}
		if tc.phase == Prepare {
			p.Layout = []int{0, 1, 2, 3, 4, 5, 6, 7}
		}
		p.Moves = []MoveEntry{{Shard: 0, From: FromLayout, To: 0}, {Shard: 1, From: FromLayout, To: 1}}
		p.Members[1].State = assign.Down
		keep := pruneMoves(p, true)
		if got := p.onLayout(1); got != tc.onLayout {
			t.Errorf("%s, died: shard 1 on the layout %v, want %v (kept %v)", tc.name, got, tc.onLayout, keep)
		}
		if !tc.onLayout && len(keep) != 2 {
			t.Errorf("%s, died: kept %v, want both conversions", tc.name, keep)
		}
	}

	// Through a whole round: b:1 is declared dead in handoff; the
	// published map keeps shard 1 converting, to its new owner.
	p := convertStart()
	p.Phase, p.Layout = Handoff, []int{2, 3, 4, 5, 6, 7}
	p.Moves = []MoveEntry{{Shard: 0, From: FromLayout, To: 0}, {Shard: 1, From: FromLayout, To: 1}}
	in := roundInput{roundRead: roundRead{Version: 5, Map: p, Reports: applied(5, "b:1")}, Now: dt0,
		Verdicts: map[string]assign.Verdict{"b:1": assign.Dead}}
	_, d, err := decideRound(cfg, running(), in)
	if err != nil || d.Publish == nil {
		t.Fatalf("failover: %v, published %v", err, d.Publish)
	}
	q := d.Publish
	if _, err := Decode(q.Encode(), 8); err != nil {
		t.Fatalf("failover map: %v\n%s", err, render(q))
	}
	if q.onLayout(1) || len(q.Moves) != 2 || q.Moves[1].To == 1 || q.Moves[1].To != q.Owner[1] {
		t.Errorf("failover: %s layout %v; want shard 1 still converting, to its new owner", render(q), q.Layout)
	}

	// A member leaves the list in settle: its conversion is kept as an
	// orphan until the failover names the owner.
	r := convertStart()
	r.Phase, r.Layout = Settle, []int{0, 2, 3, 4, 5, 6, 7}
	r.Moves = []MoveEntry{{Shard: 1, From: FromLayout, To: 1}}
	if !reconcile([]shardmap.Server{decideMembers[0], decideMembers[2], decideMembers[3]}, r, 9, true) {
		t.Fatal("a member left: no change")
	}
	if r.onLayout(1) || len(r.Moves) != 1 || r.Moves[0].To != r.Owner[1] {
		t.Errorf("left: %s layout %v; want shard 1 still converting, an orphan", render(r), r.Layout)
	}
}

// TestConvertToLayoutNoPlans: a tier converting between layouts gets
// conversions only: no balancing move for a draining member, no replica
// however hot a converted shard, and the conversion runs to its end.
func TestConvertToLayoutNoPlans(t *testing.T) {
	cfg := decideCfg()
	cfg.Compat, cfg.ToLayout, cfg.MaxMoves, cfg.MaxReplicas = true, true, 3, 2
	p := convertStart()
	p.Layout = []int{3, 4, 5, 6, 7} // shard 2 converted, on c:1, which drains
	p.Members[2].State = assign.Draining
	maps := convertRun(t, cfg, p, 60, func(int) bool { return false })
	for i, m := range maps {
		for _, mv := range m.Moves {
			if mv.From != FromLayout {
				t.Fatalf("version %d: a move %+v", i+1, mv)
			}
		}
		if len(m.Replicas) > 0 {
			t.Fatalf("version %d: replicas %v", i+1, m.Replicas)
		}
	}
	last := maps[len(maps)-1]
	if len(last.Layout) != 0 || last.Phase != Final {
		t.Errorf("the last map %s, layout %v; want every shard converted", render(last), last.Layout)
	}
	var d decider
	d.cfg = cfg
	if added, retargeted, err := d.plan(convertStart()); added+retargeted != 0 || err != nil {
		t.Errorf("plan: %d added, %d retargeted, %v", added, retargeted, err)
	}
}
