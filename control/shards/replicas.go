package shards

import (
	"sort"

	"github.com/strata-cache/strata/placement/assign"
)

// Shard scaling: a shard whose read rate per replica leaves the band
// (LeaderConfig.ReplicaBand) gains or loses a read replica. The data plane
// states the protocol (tiers/memcached); the leader's part is here:
//
//   - A new replica enters joining: every write deletes at it, nobody
//     reads it. Once every live agent applied that map it turns serving.
//   - A replica that is no longer wanted (load fell, its member drains,
//     its shard's owner failed over or drains) turns leaving: still deleted at,
//     no longer read. Once every live agent applied that, it is removed
//     and recorded in Former: it may hold copies that writes elsewhere
//     will make stale, so it is never a replica nor an owner of the shard
//     again before a flush, the rule moves already follow.
//   - A replica on a member that went down is dropped at once: nothing
//     can be read from it, and it is flushed before it serves again.
//   - A replica never lives on its shard's owner, and a shard with
//     replicas never moves (a periodic move of it waits until the
//     replicas are gone). A failover that picks a replica's member as the
//     new owner drops that replica: its content is the owner's, filled
//     under the deletes of every acknowledged write.
//
// Which replica: among the Up members that are not the owner, not yet a
// replica of the shard and hold no stale copy of it (Former), the one
// carrying the least read rate (each shard's reads split evenly over its
// owner and serving or joining replicas), then the fewest shards held,
// then the lowest index. A plain deterministic rule rather than the
// allocator's replica slots (the allocator would move replicas, which
// here take two published steps each): a replica carries reads only and
// goes where reads are lightest. The allocator then balances owners
// around the replicas: each replicated shard's request load is its
// owner's share, and each member's replica reads are load it carries
// (shareLoads, assign.Input.Carried).

// stepReplicas advances the replicas of next whose step every live
// agent has applied (applied: the version in force is applied by all).
// It reports whether next changed.
func stepReplicas(next *Published, applied bool) bool {
	if !applied || len(next.Replicas) == 0 {
		return false
	}
	changed := false
	keep := next.Replicas[:0]
	for _, r := range next.Replicas {
		switch r.State {
		case ReplicaJoining:
			r.State, changed = ReplicaServing, true
		case ReplicaLeaving:
			next.handedOff(r.Member, r.Shard)
			changed = true
			continue
		}
		keep = append(keep, r)
	}
	next.Replicas = keep
	return changed
}

// fixReplicas applies the members' states and the owners of next to its
// replicas: dropped on a member that holds no shards (down, returning,
// gone) or that owns the shard now; leaving on a draining member, or when
// the owner is not Up (a failover is due, or a drain must move the
// shard). It reports whether next
// changed.
func fixReplicas(next *Published) bool {
	changed := false
	keep := next.Replicas[:0]
	for _, r := range next.Replicas {
		if r.Member < 0 || r.Member >= len(next.Members) || !holdsShards(next.Members[r.Member].State) || next.Owner[r.Shard] == r.Member {
			changed = true
			continue
		}
		// A draining owner's shards must move, and a shard with replicas
		// does not: its replicas leave first.
		if r.State != ReplicaLeaving && (next.Members[r.Member].State == assign.Draining || !ownerUp(next, r.Shard)) {
			r.State, changed = ReplicaLeaving, true
		}
		keep = append(keep, r)
	}
	next.Replicas = keep
	return changed
}

// ownerUp reports whether shard's owner is an Up member.
func ownerUp(p *Published, shard int) bool {
	o := p.Owner[shard]
	return o >= 0 && o < len(p.Members) && p.Members[o].State == assign.Up
}

// replicated returns, per shard, whether it has replicas in any state.
func replicated(p *Published, shards int) []bool {
	out := make([]bool, shards)
	for _, r := range p.Replicas {
		out[r.Shard] = true
	}
	return out
}

// scaleReplicas decides one step of shard scaling for next from the
// shards' read rates: each shard's count (owner plus joining and serving
// replicas) goes where assign.Replicas puts it, at most budget changes
// (0: no cap), shards in order of read rate, hottest first. It reports
// the replicas added and the replicas set leaving.
func scaleReplicas(next *Published, reads []float64, band assign.Band, maxReplicas, budget int) (added, dropped int, err error) {
	shards := len(next.Owner)
	cur := make([]int, shards)
	for sh := range cur {
		cur[sh] = 1
	}
	for _, r := range next.Replicas {
		if r.State != ReplicaLeaving {
			cur[r.Shard]++
		}
	}
	want, err := assign.Replicas(reads, cur, band, maxReplicas)
	if err != nil {
		return 0, 0, err
	}
	// A shard on a compat layout is served per key by the layout, not
	// by its owner: it gets replicas once converted (convert.go).
	moving := make([]bool, shards)
	for _, mv := range next.Moves {
		moving[mv.Shard] = true
	}
	for _, sh := range next.Layout {
		moving[sh] = true
	}
	order := make([]int, shards)
	for i := range order {
		order[i] = i
	}
	rate := func(sh int) float64 {
		if sh < len(reads) {
			return reads[sh]
		}
		return 0
	}
	sort.SliceStable(order, func(i, j int) bool { return rate(order[i]) > rate(order[j]) })
	held, carried := replicaLoad(next, reads)
	for _, sh := range order {
		if budget > 0 && added+dropped >= budget {
			break
		}
		switch {
		case want[sh] > cur[sh] && !moving[sh] && ownerUp(next, sh):
			m := replicaTarget(next, sh, held, carried)
			if m < 0 {
				continue
			}
			// The shard's reads now split one way more.
			share := rate(sh) / float64(cur[sh]+1)
			for _, s := range readers(next, sh) {
				carried[s] -= rate(sh)/float64(cur[sh]) - share
			}
			next.Replicas = append(next.Replicas, ReplicaEntry{Shard: sh, Member: m, State: ReplicaJoining})
			held[m]++
			carried[m] += share
			added++
		case want[sh] < cur[sh]:
			// The newest replica leaves first: the oldest has served
			// longest and is the warmest.
			for i := len(next.Replicas) - 1; i >= 0; i-- {
				if r := &next.Replicas[i]; r.Shard == sh && r.State != ReplicaLeaving {
					r.State = ReplicaLeaving
					dropped++
					break
				}
			}
		}
	}
	return added, dropped, nil
}

// readers are the members that share shard's reads: its owner and its
// joining and serving replicas.
func readers(p *Published, shard int) []int {
	out := []int{p.Owner[shard]}
	for _, r := range p.Replicas {
		if r.Shard == shard && r.State != ReplicaLeaving {
			out = append(out, r.Member)
		}
	}
	return out
}

// replicaLoad returns, per member, the shards it owns plus the replicas
// it holds, and the read rate it carries: each shard's reads split evenly
// over its readers.
func replicaLoad(p *Published, reads []float64) (held []int, carried []float64) {
	held, carried = make([]int, len(p.Members)), make([]float64, len(p.Members))
	for _, r := range p.Replicas {
		held[r.Member]++
	}
	for sh, o := range p.Owner {
		if o < 0 || o >= len(held) {
			continue
		}
		held[o]++
		if sh >= len(reads) {
			continue
		}
		rd := readers(p, sh)
		for _, m := range rd {
			carried[m] += reads[sh] / float64(len(rd))
		}
	}
	return held, carried
}

// replicaTarget is the member that takes a new replica of shard, or -1:
// Up, not its owner nor already a replica of it, holding no stale copy of
// it (Former); the least read rate carried, then the fewest shards held,
// then the lowest index.
func replicaTarget(p *Published, shard int, held []int, carried []float64) int {
	taken := map[int]bool{p.Owner[shard]: true}
	for _, r := range p.Replicas {
		if r.Shard == shard {
			taken[r.Member] = true
		}
	}
	best := -1
	for i, m := range p.Members {
		if m.State != assign.Up || taken[i] || p.formerOwner(m.Addr, shard) {
			continue
		}
		if best < 0 || carried[i] < carried[best] || (carried[i] == carried[best] && held[i] < held[best]) {
			best = i
		}
	}
	return best
}

// sumReads adds the agents' per-shard read rates; nil when none reported
// them.
func sumReads(reports []Report, shards int) []float64 {
	var out []float64
	for _, r := range reports {
		if len(r.Reads) != shards {
			continue
		}
		if out == nil {
			out = make([]float64, shards)
		}
		for i, v := range r.Reads {
			out[i] += v
		}
	}
	return out
}

// shareLoads splits the reads of replicated shards for the allocator:
// requests[sh] keeps the owner's share (its writes and its part of the
// reads), and carried[m] is what member m serves as a replica, which the
// allocator cannot move but must count. requests is modified in place;
// carried is nil when no shard has replicas or no reads are known.
func shareLoads(p *Published, requests, reads []float64) (carried []float64) {
	if len(p.Replicas) == 0 || reads == nil || requests == nil {
		return nil
	}
	carried = make([]float64, len(p.Members))
	for sh, ok := range replicated(p, len(p.Owner)) {
		if !ok || sh >= len(reads) || sh >= len(requests) {
			continue
		}
		rd := readers(p, sh)
		part := reads[sh] / float64(len(rd))
		requests[sh] -= reads[sh] - part
		for _, m := range rd[1:] {
			carried[m] += part
		}
	}
	return carried
}
