package shards

import (
	"context"
	"fmt"
	"sort"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement/assign"
)

// Conversion of a compat tier (LeaderConfig.Compat). Its pools start by
// serving the incumbent's layout, per key. The first map lists every shard
// on the layout (Published.Layout), with the owner it is to have; then,
// whenever no batch is in flight and the operator has not paused it, the
// leader converts the next MaxMoves shards on the layout as one batch of
// moves from FromLayout to their owner. Such a batch walks the phases of
// any batch: in Prepare the shard stays listed on the layout (the layout
// owns, as a source owns in prepare); Prepare → Handoff takes it off the
// list; a converted shard never returns to it, except when its
// destination is lost before it is converted (then the layout, which
// every write of the handoff deleted at, still has no stale value).
//
// Load-balancing plans may retarget a shard on the layout: its owner is
// only a destination, so the change is free and takes no move.
//
// A conversion between two compat layouts (LeaderConfig.ToLayout) walks
// the same batches, but its destination is per key too: the pools serve a
// converted shard by the new layout, whatever its owner. The owners then
// place nothing, so the leader plans no balancing move and no replica,
// and a conversion past prepare is never undone, even when its
// destination member dies or leaves: the new layout's servers hold what
// the handoff wrote, and a shard back on the old layout would leave those
// copies to go stale. The conversion goes on, its destination following
// the shard's new owner (followOwners).

// convertPaused reads the operator's pause of tier's conversion.
func convertPaused(ctx context.Context, st store.Reader, tier string) (bool, error) {
	r, _, err := st.Get(ctx, pausedKey(tier))
	return r.Exists(), err
}

// checkLayout checks Layout and the conversions of p (Published.check).
func (p *Published) checkLayout(shards int) error {
	on := make(map[int]bool, len(p.Layout))
	for i, sh := range p.Layout {
		switch {
		case sh < 0 || sh >= shards:
			return fmt.Errorf("%w: shard %d on the layout out of range", ErrPayload, sh)
		case i > 0 && sh <= p.Layout[i-1]:
			return fmt.Errorf("%w: layout shards not in order at %d", ErrPayload, sh)
		}
		on[sh] = true
	}
	for _, r := range p.Replicas {
		if on[r.Shard] {
			return fmt.Errorf("%w: shard %d on the layout has replicas", ErrPayload, r.Shard)
		}
	}
	for _, mv := range p.Moves {
		conv := mv.From == FromLayout
		switch {
		case conv && p.Owner[mv.Shard] != mv.To:
			return fmt.Errorf("%w: shard %d converts to member %d but is owned by %d", ErrPayload, mv.Shard, mv.To, p.Owner[mv.Shard])
		case on[mv.Shard] && !(conv && p.phaseOf(mv) == Prepare):
			return fmt.Errorf("%w: shard %d on the layout moves from %d in %s", ErrPayload, mv.Shard, mv.From, p.phaseOf(mv))
		case conv && p.phaseOf(mv) == Prepare && !on[mv.Shard]:
			return fmt.Errorf("%w: shard %d converts in prepare but is off the layout", ErrPayload, mv.Shard)
		}
	}
	return nil
}

// onLayout reports whether shard is on p's layout.
func (p *Published) onLayout(shard int) bool {
	i := sort.SearchInts(p.Layout, shard)
	return i < len(p.Layout) && p.Layout[i] == shard
}

// toLayout puts shard back on the layout (a conversion whose destination
// was lost).
func (p *Published) toLayout(shard int) {
	i := sort.SearchInts(p.Layout, shard)
	if i < len(p.Layout) && p.Layout[i] == shard {
		return
	}
	p.Layout = append(p.Layout, 0)
	copy(p.Layout[i+1:], p.Layout[i:])
	p.Layout[i] = shard
}

// offLayout takes shards, conversions stepping into Handoff, off the
// layout: their owner owns them from Handoff on.
func (p *Published) offLayout(shards []int) {
	if len(shards) == 0 {
		return
	}
	conv := make(map[int]bool, len(shards))
	for _, sh := range shards {
		conv[sh] = true
	}
	keep := p.Layout[:0]
	for _, sh := range p.Layout {
		if !conv[sh] {
			keep = append(keep, sh)
		}
	}
	p.Layout = keep
	if len(p.Layout) == 0 {
		p.Layout = nil
	}
}

// followOwners makes each conversion's destination its shard's owner
// again after a failover placed orphans: in a conversion between layouts
// (LeaderConfig.ToLayout) a conversion outlives its destination member,
// which is only a name there.
func (p *Published) followOwners() {
	for i, mv := range p.Moves {
		if mv.From == FromLayout {
			p.Moves[i].To = p.Owner[mv.Shard]
		}
	}
}

// convertBatch starts, in next (final, no moves), the conversion of up to
// max shards on the layout (0: all), in shard order, and returns how
// many. A shard goes to its owner if that is up and holds no stale copy
// of it, or else to the clean target (retargeted: the owner of a shard on
// the layout is only a destination); one with neither waits.
func convertBatch(next *Published, max int) int {
	n := 0
	for _, sh := range next.Layout {
		if max > 0 && n == max {
			break
		}
		to := next.Owner[sh]
		if next.Members[to].State != assign.Up || next.formerOwner(next.Members[to].Addr, sh) {
			if to = cleanTarget(next, sh); to < 0 {
				continue
			}
			next.Owner[sh] = to
		}
		next.Moves = append(next.Moves, MoveEntry{Shard: sh, From: FromLayout, To: to})
		n++
	}
	if n > 0 {
		next.Phase = Prepare
	}
	return n
}
