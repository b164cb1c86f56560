package shardmap

import (
	"fmt"
	"sort"
)

// MovePhase is the step a shard's move has reached. The package comment
// of tiers/memcached states the protocol and why each step is safe; this
// type only carries it from the control plane to the pools.
type MovePhase uint8

const (
	// MoveNone: the shard is not moving (the zero Move).
	MoveNone MovePhase = iota
	// MovePrepare: the owner is still the source. Reads go to the source;
	// writes and deletes go to the source and then delete at the
	// destination.
	MovePrepare
	// MoveHandoff: the owner is the destination. Reads go to the
	// destination and a miss there is filled from the source under a
	// lease; writes and deletes go to the destination and then delete at
	// the source.
	MoveHandoff
	// MoveSettle: as handoff, without fills.
	MoveSettle
)

var movePhaseNames = [...]string{"none", "prepare", "handoff", "settle"}

func (p MovePhase) String() string {
	if int(p) < len(movePhaseNames) {
		return movePhaseNames[p]
	}
	return "unknown"
}

// Move is a shard's move from one server to another, as indexes into the
// map's server list. Invariant of a map: From != To; in MovePrepare the
// shard's owner is From, in MoveHandoff and MoveSettle it is To. From may
// be FromLayout (layout.go): the owner is then To in every phase, and the
// shard is on the layout in MovePrepare.
//
// What the publisher must keep, which a map cannot show: each phase is
// published only once every live proxy applied the one before; settle
// lasts at least the pools' lease TTL before the final map (no move)
// follows; and To holds no copy of the shard that could be stale — it
// never held the shard, was flushed since (a new Member.Incarnation), or
// lost it longer ago than the longest item TTL. The same holds for the
// new owner of a failover.
type Move struct {
	From, To int
	Phase    MovePhase
}

// ShardMove names the shard a Move is for, for NewMoving.
type ShardMove struct {
	Shard int
	Move
}

// NewMoving is New with moves in flight. owner gives each shard's owner as
// the invariant of Move requires it for its phase; a map without moves
// is what New returns.
func NewMoving(version uint64, servers []Server, owner []int, moves []ShardMove) (*Map, error) {
	m, err := New(version, servers, owner)
	if err != nil || len(moves) == 0 {
		return m, err
	}
	m.moves = make(map[int32]Move, len(moves))
	for _, sm := range moves {
		mv := sm.Move
		switch {
		case sm.Shard < 0 || sm.Shard >= len(owner):
			return nil, fmt.Errorf("%w: move of shard %d of %d", ErrInvalid, sm.Shard, len(owner))
		case m.moves[int32(sm.Shard)].Phase != MoveNone:
			return nil, fmt.Errorf("%w: shard %d moves twice", ErrInvalid, sm.Shard)
		case mv.From < FromLayout || mv.From >= len(servers) || mv.To < 0 || mv.To >= len(servers) || mv.From == mv.To:
			return nil, fmt.Errorf("%w: shard %d moves from server %d to %d of %d", ErrInvalid, sm.Shard, mv.From, mv.To, len(servers))
		case mv.From == FromLayout && owner[sm.Shard] != mv.To:
			return nil, fmt.Errorf("%w: shard %d converts from the layout to %d but is owned by %d", ErrInvalid, sm.Shard, mv.To, owner[sm.Shard])
		case mv.Phase == MovePrepare && mv.From != FromLayout && owner[sm.Shard] != mv.From:
			return nil, fmt.Errorf("%w: shard %d in prepare is owned by %d, not its source %d", ErrInvalid, sm.Shard, owner[sm.Shard], mv.From)
		case (mv.Phase == MoveHandoff || mv.Phase == MoveSettle) && owner[sm.Shard] != mv.To:
			return nil, fmt.Errorf("%w: shard %d in %s is owned by %d, not its destination %d", ErrInvalid, sm.Shard, mv.Phase, owner[sm.Shard], mv.To)
		case mv.Phase == MoveNone || int(mv.Phase) >= len(movePhaseNames):
			return nil, fmt.Errorf("%w: shard %d has move phase %d", ErrInvalid, sm.Shard, mv.Phase)
		}
		m.moves[int32(sm.Shard)] = mv
	}
	return m, nil
}

// Move returns shard's move; Phase is MoveNone when it is not moving. A
// map without moves answers without a lookup, so routing a shard that is
// not moving costs one length test.
func (m *Map) Move(shard int) Move {
	if len(m.moves) == 0 {
		return Move{}
	}
	return m.moves[int32(shard)]
}

// Moving returns how many shards have a move in flight.
func (m *Map) Moving() int { return len(m.moves) }

// Moves returns the moves in flight, by shard.
func (m *Map) Moves() []ShardMove {
	out := make([]ShardMove, 0, len(m.moves))
	for sh, mv := range m.moves {
		out = append(out, ShardMove{Shard: int(sh), Move: mv})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Shard < out[j].Shard })
	return out
}

func equalMoves(a, b map[int32]Move) bool {
	if len(a) != len(b) {
		return false
	}
	for sh, mv := range a {
		if b[sh] != mv {
			return false
		}
	}
	return true
}
