package shardmap

import "fmt"

// A map can be half way through the conversion of a pool from a compat
// layout (tiers/memcached/compat: the incumbent's placement, per key, not
// per shard) to the map itself. Its shards are then of three kinds:
//
//   - on the layout (OnLayout): every key of the shard is served by the
//     server the layout names for it; the shard's owner in the map is
//     only its destination-to-be;
//   - converting: a move whose From is FromLayout. Its source is per key
//     (the layout's server for the key, which may be the destination
//     itself: that key needs no handoff). In MovePrepare the shard is
//     still on the layout (the layout owns, as From owns a shard move in
//     prepare); in MoveHandoff and MoveSettle the owner owns;
//   - converted: an ordinary shard of the map.
//
// Shards only ever leave the layout: a converted shard never returns to it.

// FromLayout is the From of a Move whose source is the pool's compat
// layout, asked per key, rather than one server of the map.
const FromLayout = -1

// WithLayout returns a copy of m whose given shards are on the layout.
// Invariants: a shard on the layout has no replicas, and has a move only
// when it is a FromLayout move in MovePrepare; every FromLayout move in
// MovePrepare is on the layout. A map with no shard on the layout and no
// FromLayout move is an ordinary map.
func (m *Map) WithLayout(shards []int) (*Map, error) {
	c := *m
	c.layout, c.onLayout = nil, 0
	if len(shards) > 0 {
		c.layout = make([]uint64, (len(m.owner)+63)/64)
	}
	for _, sh := range shards {
		switch {
		case sh < 0 || sh >= len(m.owner):
			return nil, fmt.Errorf("%w: shard %d of %d on the layout", ErrInvalid, sh, len(m.owner))
		case c.OnLayout(sh):
			return nil, fmt.Errorf("%w: shard %d on the layout twice", ErrInvalid, sh)
		case m.Replicas(sh) != nil:
			return nil, fmt.Errorf("%w: shard %d on the layout has replicas", ErrInvalid, sh)
		}
		if mv := m.Move(sh); mv.Phase != MoveNone && (mv.From != FromLayout || mv.Phase != MovePrepare) {
			return nil, fmt.Errorf("%w: shard %d on the layout moves from %d in %s", ErrInvalid, sh, mv.From, mv.Phase)
		}
		c.layout[sh>>6] |= 1 << (sh & 63)
		c.onLayout++
	}
	for sh, mv := range m.moves {
		if mv.From == FromLayout && mv.Phase == MovePrepare && !c.OnLayout(int(sh)) {
			return nil, fmt.Errorf("%w: shard %d converts in prepare but is not on the layout", ErrInvalid, sh)
		}
	}
	return &c, nil
}

// OnLayout reports whether shard's keys are placed by the compat layout.
// A map without shards on the layout answers with one nil test.
func (m *Map) OnLayout(shard int) bool {
	return m.layout != nil && m.layout[shard>>6]&(1<<(shard&63)) != 0
}

// OnLayoutCount returns how many shards are on the layout.
func (m *Map) OnLayoutCount() int { return m.onLayout }

// LayoutShards returns the shards on the layout, in order.
func (m *Map) LayoutShards() []int {
	var out []int
	for sh := range m.owner {
		if m.OnLayout(sh) {
			out = append(out, sh)
		}
	}
	return out
}

// Converting reports whether m has shards on the layout or moves from it:
// a pool needs its compat layout to route by m.
func (m *Map) Converting() bool {
	if m.onLayout > 0 {
		return true
	}
	for _, mv := range m.moves {
		if mv.From == FromLayout {
			return true
		}
	}
	return false
}

func equalLayout(a, b *Map) bool {
	if a.onLayout != b.onLayout {
		return false
	}
	for i := range a.layout {
		if a.layout[i] != b.layout[i] {
			return false
		}
	}
	return true
}
