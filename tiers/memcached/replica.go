package memcached

import (
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/handoff"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// Read replicas (shardmap.Replica): a shard the control plane scaled out
// has, besides its owner, replicas that take a share of its reads. The
// package comment states the protocol and why it never serves a value
// older than an acknowledged write; this file routes. A replicated
// request runs as a moveOp (move.go), whose handoff steps are the same: a
// write goes to the owner and then deletes at every replica; a replica's
// read is a lease fill from the owner. A shard without replicas pays one
// length test.

// doReplicated routes op for a shard with replicas reps. It reports false
// when the request takes the ordinary path to the owner: a read whose
// turn is the owner's, a read that is not a plain get, or a read whose
// replica this pool holds down.
func (p *Pool) doReplicated(rt *route, op *tiers.Op, shard int, reps []shardmap.Replica) bool {
	owner := rt.owners[rt.m.Owner(shard)]
	// A touch or gat changes the item's TTL at the owner: the replicas'
	// copies, filled with the old TTL, are deleted as for a write.
	if op.Req.IsWrite() || op.Req.HasTTL {
		others := make([]*server, len(reps))
		for i, r := range reps {
			others[i] = rt.owners[r.Server]
		}
		mo := p.newMoveOp(op, shard, true, owner, others)
		mo.run(mo.m.Write(len(others), handoff.AtPrimary)) // the owner: fills read there
		return true
	}
	if !op.Req.IsRead() {
		return false
	}
	to := pickReader(rt, reps, &p.lstates[op.Loop].spread)
	if to == nil || healthState(to.state.Load()) != stateUp {
		return false
	}
	p.moves.replicaReads.Add(1)
	mo := p.newMoveOp(op, shard, true, to, []*server{owner})
	mo.run(mo.m.Fill())
	return true
}

// pickReader is the server whose turn it is to read a replicated shard:
// nil for the owner, else a serving replica. The turn is a per-loop
// counter, so reads spread evenly and deterministically over the owner
// and the serving replicas (write-only ones serve no read).
func pickReader(rt *route, reps []shardmap.Replica, turn *uint32) *server {
	serving := 0
	for _, r := range reps {
		if r.State == shardmap.ReplicaServing {
			serving++
		}
	}
	if serving == 0 {
		return nil
	}
	*turn++
	k := int(*turn % uint32(serving+1))
	if k == 0 {
		return nil
	}
	for _, r := range reps {
		if r.State != shardmap.ReplicaServing {
			continue
		}
		if k--; k == 0 {
			return rt.owners[r.Server]
		}
	}
	return nil
}

// stillReplica reports whether the map of rt still has replica serving
// shard, with owner as its owner. A replica's fill checks it after the
// read at the owner and before the store at the replica: once a pool has
// applied the replica write-only (leaving), no fill of its own stores a
// value read before that, so the control plane's wait for every pool to
// apply the write-only step also waits out the fills.
func (rt *route) stillReplica(shard int, owner, replica *server) bool {
	if rt.owners[rt.m.Owner(shard)] != owner {
		return false
	}
	for _, r := range rt.m.Replicas(shard) {
		if rt.owners[r.Server] == replica {
			return r.State == shardmap.ReplicaServing
		}
	}
	return false
}
