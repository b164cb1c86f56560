package shardmap

import (
	"errors"
	"testing"
)

// TestMoves: a move's phase fixes who owns the shard; maps with and
// without moves, or with other moves, are different maps.
func TestMoves(t *testing.T) {
	list := servers(3)
	owner := []int{0, 1, 2, 0}
	good := []ShardMove{
		{Shard: 0, Move: Move{From: 0, To: 2, Phase: MovePrepare}},
		{Shard: 1, Move: Move{From: 0, To: 1, Phase: MoveHandoff}},
		{Shard: 2, Move: Move{From: 1, To: 2, Phase: MoveSettle}},
	}
	m, err := NewMoving(3, list, owner, good)
	if err != nil {
		t.Fatal(err)
	}
	if m.Moving() != 3 || m.Move(3) != (Move{}) || m.Move(1) != good[1].Move {
		t.Errorf("moves kept wrong: %v", m.Moves())
	}
	if got := m.Moves(); len(got) != 3 || got[0] != good[0] || got[2] != good[2] {
		t.Errorf("Moves() = %v", got)
	}
	plain := mustNew(t, 3, list, owner...)
	if plain.Moving() != 0 || plain.Move(0).Phase != MoveNone {
		t.Errorf("a map from New has moves")
	}
	other, _ := NewMoving(3, list, owner, []ShardMove{{Shard: 0, Move: Move{From: 0, To: 1, Phase: MovePrepare}}})
	if m.Equal(plain) || plain.Equal(m) || m.Equal(other) {
		t.Error("maps that differ only in moves compare equal")
	}
	again, _ := NewMoving(3, list, owner, append([]ShardMove(nil), good[2], good[0], good[1]))
	if !m.Equal(again) {
		t.Error("the same moves listed in another order compare different")
	}

	bad := map[string]ShardMove{
		"prepare not at its source":      {Shard: 0, Move: Move{From: 1, To: 0, Phase: MovePrepare}},
		"handoff not at its destination": {Shard: 0, Move: Move{From: 0, To: 1, Phase: MoveHandoff}},
		"settle not at its destination":  {Shard: 0, Move: Move{From: 0, To: 1, Phase: MoveSettle}},
		"to itself":                      {Shard: 0, Move: Move{From: 0, To: 0, Phase: MoveSettle}},
		"unknown server":                 {Shard: 0, Move: Move{From: 0, To: 3, Phase: MovePrepare}},
		"unknown shard":                  {Shard: 4, Move: Move{From: 0, To: 1, Phase: MovePrepare}},
		"no phase":                       {Shard: 0, Move: Move{From: 0, To: 1}},
		"unknown phase":                  {Shard: 0, Move: Move{From: 0, To: 1, Phase: 9}},
	}
	for name, sm := range bad {
		if _, err := NewMoving(3, list, owner, []ShardMove{sm}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", name, err)
		}
	}
	if _, err := NewMoving(3, list, owner, []ShardMove{good[0], good[0]}); !errors.Is(err, ErrInvalid) {
		t.Errorf("a shard moving twice: err %v, want ErrInvalid", err)
	}
}

// TestSupersedesIncarnation: a member's incarnation is part of the
// topology, so a republication that only bumps it is a new topology.
func TestSupersedesIncarnation(t *testing.T) {
	list := servers(2)
	m := mustNew(t, 2, list, 0, 1)
	a := Topology{Map: m, Members: []Member{{Server: list[0]}, {Server: list[1]}}}
	b := Topology{Map: m, Members: []Member{{Server: list[0]}, {Server: list[1], Incarnation: 1}}}
	if a.Equal(b) {
		t.Error("topologies that differ in an incarnation compare equal")
	}
	if _, err := Supersedes(a, b); !errors.Is(err, ErrStale) {
		t.Errorf("same version, other incarnation: err %v, want ErrStale", err)
	}
}
