package shards

import (
	"reflect"
	"testing"
	"time"

	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// convertStart is the first map of a compat tier: decideMap's owners as
// destinations, every shard on the layout.
func convertStart() *Published {
	p := decideMap(Final, "uuuu")
	p.Layout = []int{0, 1, 2, 3, 4, 5, 6, 7}
	return p
}

// convertRun drives decideRound like a leader whose agents apply every
// version at once, a second apart, for up to rounds rounds, and returns
// the maps it published. paused(r) is the operator's pause in round r. Every map must decode and make a topology.
func convertRun(t *testing.T, cfg LeaderConfig, p *Published, rounds int, paused func(int) bool) []*Published {
	t.Helper()
	var mem roundMemory
	var out []*Published
	v := uint64(0)
	for r := range rounds {
		in := roundInput{roundRead: roundRead{Version: v, Map: p, Reports: applied(v), ConvertPaused: paused(r)}, Now: dt0.Add(time.Duration(r) * time.Second)}
		var d roundDecision
		var err error
		mem, d, err = decideRound(cfg, mem, in)
		if err != nil {
			t.Fatal(err)
		}
		if d.Publish == nil {
			continue
		}
		back, err := Decode(d.Publish.Encode(), cfg.Shards)
		if err != nil {
			t.Fatalf("version %d: %v\n%s", v+1, err, render(d.Publish))
		}
		if _, err := back.Topology(v + 1); err != nil {
			t.Fatalf("version %d: %v", v+1, err)
		}
		mem.published(d.Publish, in.Now)
		p, v = back, v+1
		out = append(out, p)
	}
	return out
}

// TestConvertBatches: a compat tier converts MaxMoves shards at a time,
// each batch through prepare (still on the layout), handoff and settle
// (off it) to final, until no shard is left on the layout; the owners
// are the first map's, and nothing is published once it is done.
func TestConvertBatches(t *testing.T) {
	cfg := decideCfg()
	cfg.MaxMoves = 3
	maps := convertRun(t, cfg, convertStart(), 60, func(int) bool { return false })
	var converted []int
	for i, p := range maps {
		for _, mv := range p.Moves {
			if mv.From != FromLayout || p.Owner[mv.Shard] != mv.To || mv.To != []int{0, 1, 2, 3, 0, 1, 2, 3}[mv.Shard] {
				t.Fatalf("version %d: move %+v", i+1, mv)
			}
			if (p.phaseOf(mv) == Prepare) != p.onLayout(mv.Shard) {
				t.Fatalf("version %d: shard %d in %s, on the layout %v", i+1, mv.Shard, p.phaseOf(mv), p.onLayout(mv.Shard))
			}
		}
		if len(p.Moves) > 3 {
			t.Fatalf("version %d: a batch of %d, cap 3", i+1, len(p.Moves))
		}
		if p.Phase == Prepare {
			for _, mv := range p.Moves {
				converted = append(converted, mv.Shard)
			}
		}
	}
	if !reflect.DeepEqual(converted, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("converted %v, want every shard once in order", converted)
	}
	last := maps[len(maps)-1]
	if last.Phase != Final || len(last.Layout) != 0 || len(maps) != 3*4 {
		t.Errorf("%d maps, the last %s layout %v; want 12 (3 batches of 4 phases), final, none on the layout", len(maps), render(last), last.Layout)
	}
}

// TestConvertPause: a paused conversion starts no batch; one in flight
// ends; resumed, it goes on where it stopped.
func TestConvertPause(t *testing.T) {
	cfg := decideCfg()
	cfg.MaxMoves = 3
	// Paused from round 1 (the first batch is under way) to round 40.
	paused := func(r int) bool { return r >= 1 && r < 40 }
	maps := convertRun(t, cfg, convertStart(), 60, paused)
	if maps[0].Phase != Prepare || len(maps[0].Moves) != 3 {
		t.Fatalf("version 1: %s", render(maps[0]))
	}
	if maps[3].Phase != Final || len(maps[3].Layout) != 5 {
		t.Fatalf("version 4: %s layout %v, want the first batch ended", render(maps[3]), maps[3].Layout)
	}
	if len(maps) < 5 || maps[4].Phase != Prepare {
		t.Fatalf("the conversion did not resume: %d maps", len(maps))
	}
	last := maps[len(maps)-1]
	if len(last.Layout) != 0 || last.Phase != Final {
		t.Errorf("after resuming: %s layout %v", render(last), last.Layout)
	}
	// Paused for good: nothing after the first batch.
	stuck := convertRun(t, cfg, convertStart(), 60, func(r int) bool { return r >= 1 })
	if n := len(stuck); n != 4 || len(stuck[n-1].Layout) != 5 {
		t.Errorf("paused: %d maps, the last with %v on the layout; want 4 and 5 shards", n, stuck[n-1].Layout)
	}
}

// TestConvertDestinationLost: a conversion whose destination dies or
// leaves puts its shard back on the layout (which every write of the
// handoff deleted at, so it holds no stale value), and the shard converts
// later to the failover's owner.
func TestConvertDestinationLost(t *testing.T) {
	p := convertStart()
	p.Phase, p.Layout = Handoff, []int{2, 3, 4, 5, 6, 7}
	p.Moves = []MoveEntry{{Shard: 0, From: FromLayout, To: 0}, {Shard: 1, From: FromLayout, To: 1}}
	p.Members[1].State = assign.Down
	keep := pruneMoves(p, false)
	if len(keep) != 1 || keep[0].Shard != 0 || !reflect.DeepEqual(p.Layout, []int{1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("died: kept %v, layout %v; want shard 0's move, shard 1 back on the layout", keep, p.Layout)
	}

	q := convertStart()
	q.Phase, q.Layout = Settle, []int{0, 2, 3, 4, 5, 6, 7}
	q.Moves = []MoveEntry{{Shard: 1, From: FromLayout, To: 1}}
	if !reconcile([]shardmap.Server{decideMembers[0], decideMembers[2], decideMembers[3]}, q, 9, false) {
		t.Fatal("a member left: no change")
	}
	if q.Phase != Final || len(q.Moves) != 0 || !q.onLayout(1) {
		t.Errorf("left: %s layout %v; want final, shard 1 on the layout", render(q), q.Layout)
	}
}

// TestLayoutPayload: Decode refuses layouts and conversions that break
// the invariant of Published.
func TestLayoutPayload(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Published)
	}{
		{"shard out of range", func(p *Published) { p.Layout = []int{8} }},
		{"out of order", func(p *Published) { p.Layout = []int{3, 1} }},
		{"twice", func(p *Published) { p.Layout = []int{1, 1} }},
		{"replica on the layout", func(p *Published) {
			p.Layout = []int{1}
			p.Replicas = []ReplicaEntry{{Shard: 1, Member: 0, State: ReplicaJoining}}
		}},
		{"prepare off the layout", func(p *Published) {
			p.Phase, p.Moves = Prepare, []MoveEntry{{Shard: 1, From: FromLayout, To: 1}}
		}},
		{"handoff on the layout", func(p *Published) {
			p.Phase, p.Layout, p.Moves = Handoff, []int{1}, []MoveEntry{{Shard: 1, From: FromLayout, To: 1}}
		}},
		{"a conversion to another owner", func(p *Published) {
			p.Phase, p.Moves = Handoff, []MoveEntry{{Shard: 1, From: FromLayout, To: 2}}
		}},
		{"a server move on the layout", func(p *Published) {
			p.Phase, p.Layout, p.Moves = Prepare, []int{1}, []MoveEntry{{Shard: 1, From: 1, To: 2}}
		}},
		{"a source below the layout", func(p *Published) {
			p.Phase, p.Moves = Handoff, []MoveEntry{{Shard: 1, From: FromLayout - 1, To: 1}}
		}},
	} {
		p := decideMap(Final, "uuuu")
		tc.edit(p)
		if _, err := Decode(p.Encode(), 8); err == nil {
			t.Errorf("%s: decoded", tc.name)
		}
	}
	ok := convertStart()
	ok.Phase, ok.Moves = Prepare, []MoveEntry{{Shard: 1, From: FromLayout, To: 1}}
	if _, err := Decode(ok.Encode(), 8); err != nil {
		t.Errorf("a conversion in prepare: %v", err)
	}
}

// TestConvertAroundOwners: a shard on the layout whose owner cannot take
// it (draining) converts to the clean target instead, and shards on the
// layout get no read replicas however hot.
func TestConvertAroundOwners(t *testing.T) {
	p := convertStart()
	p.Members[1].State = assign.Draining
	if n := convertBatch(p, 0); n != 8 {
		t.Fatalf("%d conversions, want all 8", n)
	}
	for _, mv := range p.Moves {
		if mv.To == 1 || p.Owner[mv.Shard] != mv.To {
			t.Errorf("conversion %+v onto the draining member, or not its owner %d", mv, p.Owner[mv.Shard])
		}
	}
	if _, err := Decode(p.Encode(), 8); err != nil {
		t.Fatal(err)
	}

	q := convertStart()
	reads := []float64{1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6}
	added, _, err := scaleReplicas(q, reads, assign.Band{Low: 1, High: 10}, 2, 0)
	if err != nil || added != 0 {
		t.Errorf("replicas of shards on the layout: %d added, %v", added, err)
	}
	q.Layout = q.Layout[1:]
	if added, _, _ := scaleReplicas(q, reads, assign.Band{Low: 1, High: 10}, 2, 0); added != 1 {
		t.Errorf("a converted hot shard: %d replicas added, want 1", added)
	}
}

// TestConvertGrace: a batch of conversions stays in handoff for
// ConvertGrace, a batch of ordinary moves for Grace.
func TestConvertGrace(t *testing.T) {
	cfg := decideCfg()
	cfg.ConvertGrace = time.Minute
	conv := convertStart()
	conv.Phase, conv.Layout = Handoff, conv.Layout[1:]
	conv.Moves = []MoveEntry{{Shard: 0, From: FromLayout, To: 0}}
	plain := decideMap(Handoff, "uuuu", MoveEntry{Shard: 0, From: 1, To: 0})
	for _, tc := range []struct {
		name  string
		p     *Published
		after time.Duration
		want  Phase
	}{
		{"conversion within ConvertGrace", conv, 30 * time.Second, Handoff},
		{"conversion after ConvertGrace", conv, time.Minute, Settle},
		{"move after Grace", plain, cfg.Grace, Settle},
	} {
		in := roundInput{roundRead: roundRead{Version: 5, Map: tc.p, Reports: applied(5)}, Now: dt0.Add(tc.after)}
		mem := running()
		mem.moves = map[int]moveClock{0: {Handoff, dt0}} // shard 0 entered handoff at dt0
		_, d, err := decideRound(cfg, mem, in)
		if err != nil {
			t.Fatal(err)
		}
		got := Handoff
		if d.Publish != nil {
			got = d.Publish.Phase
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
