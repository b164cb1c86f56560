package shardmap

import (
	"fmt"
	"sort"
)

// ReplicaState is what a read replica of a shard does. Writes reach every
// replica whatever its state; only a serving one is read from.
type ReplicaState uint8

const (
	// ReplicaWriteOnly receives the deletes of every write of the shard
	// and serves no read: a replica joining (until every proxy deletes at
	// it) or leaving (until no proxy reads it).
	ReplicaWriteOnly ReplicaState = iota
	// ReplicaServing receives the same deletes and serves reads, filling
	// its misses from the owner.
	ReplicaServing
)

var replicaStateNames = [...]string{"write-only", "serving"}

func (s ReplicaState) String() string {
	if int(s) < len(replicaStateNames) {
		return replicaStateNames[s]
	}
	return "unknown"
}

// Replica is one read replica of a shard: a server index into the map's
// list and its state.
type Replica struct {
	Server int
	State  ReplicaState
}

// ShardReplica names the shard a Replica is for, for WithReplicas.
type ShardReplica struct {
	Shard int
	Replica
}

// WithReplicas returns a copy of m whose shards have the given read
// replicas besides their owner. Invariants: a replica is never its
// shard's owner nor listed twice for a shard, and a shard with a move in
// flight has none (the control plane drops a shard's replicas before it
// moves it, and a move's two sides already take every write).
//
// What the publisher must keep, which a map cannot show: a replica turns
// serving only once every live proxy applied it write-only, and leaves
// the map only once every live proxy applied it write-only again; and a
// server becomes a replica only if it holds no copy of the shard that
// could be stale, the rule of Move's destination.
func (m *Map) WithReplicas(reps []ShardReplica) (*Map, error) {
	c := *m
	c.replicas = nil
	if len(reps) == 0 {
		return &c, nil
	}
	c.replicas = make(map[int32][]Replica, len(reps))
	for _, sr := range reps {
		switch {
		case sr.Shard < 0 || sr.Shard >= len(m.owner):
			return nil, fmt.Errorf("%w: replica of shard %d of %d", ErrInvalid, sr.Shard, len(m.owner))
		case sr.Server < 0 || sr.Server >= len(m.servers):
			return nil, fmt.Errorf("%w: shard %d has a replica on server %d of %d", ErrInvalid, sr.Shard, sr.Server, len(m.servers))
		case sr.Server == int(m.owner[sr.Shard]):
			return nil, fmt.Errorf("%w: shard %d has a replica on its owner %d", ErrInvalid, sr.Shard, sr.Server)
		case int(sr.State) >= len(replicaStateNames):
			return nil, fmt.Errorf("%w: shard %d has a replica in state %d", ErrInvalid, sr.Shard, sr.State)
		case m.Move(sr.Shard).Phase != MoveNone:
			return nil, fmt.Errorf("%w: shard %d has replicas and a move in flight", ErrInvalid, sr.Shard)
		case m.OnLayout(sr.Shard):
			return nil, fmt.Errorf("%w: shard %d on the compat layout has replicas", ErrInvalid, sr.Shard)
		}
		for _, r := range c.replicas[int32(sr.Shard)] {
			if r.Server == sr.Server {
				return nil, fmt.Errorf("%w: shard %d has two replicas on server %d", ErrInvalid, sr.Shard, sr.Server)
			}
		}
		c.replicas[int32(sr.Shard)] = append(c.replicas[int32(sr.Shard)], sr.Replica)
	}
	return &c, nil
}

// Replicas returns shard's read replicas, in the order given to
// WithReplicas; nil when it has none. The slice is the map's: read only.
// A map without replicas answers without a lookup.
func (m *Map) Replicas(shard int) []Replica {
	if len(m.replicas) == 0 {
		return nil
	}
	return m.replicas[int32(shard)]
}

// Replicated returns how many shards have at least one replica.
func (m *Map) Replicated() int { return len(m.replicas) }

// AllReplicas returns every replica, by shard and then in order.
func (m *Map) AllReplicas() []ShardReplica {
	var out []ShardReplica
	for sh, rs := range m.replicas {
		for _, r := range rs {
			out = append(out, ShardReplica{Shard: int(sh), Replica: r})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Shard < out[j].Shard })
	return out
}

// ReplicaCounts returns how many replicas each server holds, indexed like
// Servers.
func (m *Map) ReplicaCounts() []int {
	c := make([]int, len(m.servers))
	for _, rs := range m.replicas {
		for _, r := range rs {
			c[r.Server]++
		}
	}
	return c
}

func equalReplicas(a, b map[int32][]Replica) bool {
	if len(a) != len(b) {
		return false
	}
	for sh, ra := range a {
		rb := b[sh]
		if len(ra) != len(rb) {
			return false
		}
		for i := range ra {
			if ra[i] != rb[i] {
				return false
			}
		}
	}
	return true
}
