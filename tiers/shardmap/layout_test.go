package shardmap

import (
	"errors"
	"testing"
)

// TestLayout: the shards on a compat layout and the moves from it obey
// the invariants of layout.go, and take part in Equal.
func TestLayout(t *testing.T) {
	list := servers(3)
	owner := []int{0, 1, 2, 0, 1}
	moves := []ShardMove{
		{Shard: 0, Move: Move{From: FromLayout, To: 0, Phase: MovePrepare}},
		{Shard: 1, Move: Move{From: FromLayout, To: 1, Phase: MoveHandoff}},
	}
	base, err := NewMoving(4, list, owner, moves)
	if err != nil {
		t.Fatal(err)
	}
	if base.Converting() != true || base.OnLayout(0) {
		t.Fatalf("Converting %v, OnLayout(0) %v before WithLayout", base.Converting(), base.OnLayout(0))
	}
	m, err := base.WithLayout([]int{0, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for sh, want := range []bool{true, false, false, true, true} {
		if m.OnLayout(sh) != want {
			t.Errorf("OnLayout(%d) = %v, want %v", sh, !want, want)
		}
	}
	if m.OnLayoutCount() != 3 || len(m.LayoutShards()) != 3 || m.LayoutShards()[1] != 3 {
		t.Errorf("count %d, shards %v", m.OnLayoutCount(), m.LayoutShards())
	}
	same, _ := base.WithLayout([]int{4, 3, 0})
	fewer, _ := base.WithLayout([]int{0, 3})
	if !m.Equal(same) || m.Equal(fewer) || m.Equal(base) {
		t.Error("Equal ignores the layout, or its order")
	}
	plain := mustNew(t, 4, list, owner...)
	if plain.Converting() || plain.OnLayout(0) || plain.OnLayoutCount() != 0 {
		t.Error("a plain map converts")
	}
	if onlyLayout, _ := plain.WithLayout([]int{2}); !onlyLayout.Converting() {
		t.Error("a map with a shard on the layout does not convert")
	}

	for _, tc := range []struct {
		name   string
		moves  []ShardMove
		layout []int
	}{
		{"shard out of range", nil, []int{5}},
		{"shard twice", nil, []int{1, 1}},
		{"prepare off the layout", moves, []int{3}},
		{"handoff on the layout", moves, []int{0, 1}},
		{"server move on the layout", []ShardMove{{Shard: 2, Move: Move{From: 1, To: 2, Phase: MoveHandoff}}}, []int{2}},
	} {
		mm, err := NewMoving(4, list, owner, tc.moves)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := mm.WithLayout(tc.layout); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: WithLayout = %v, want ErrInvalid", tc.name, err)
		}
	}
	// A conversion's owner is its destination in every phase.
	if _, err := NewMoving(4, list, owner, []ShardMove{{Shard: 0, Move: Move{From: FromLayout, To: 1, Phase: MovePrepare}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a conversion to a server that does not own the shard: %v", err)
	}
	reps, _ := plain.WithLayout([]int{2})
	if _, err := reps.WithReplicas([]ShardReplica{{Shard: 2, Replica: Replica{Server: 0}}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("replicas of a shard on the layout: %v", err)
	}
}
