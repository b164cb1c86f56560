package shardmap

import (
	"errors"
	"testing"
)

func TestWithReplicasChecksAndCompares(t *testing.T) {
	servers := []Server{{"a:1", 1}, {"b:1", 1}, {"c:1", 1}}
	m, err := NewMoving(3, servers, []int{0, 1, 2, 0}, []ShardMove{{Shard: 3, Move: Move{From: 0, To: 1, Phase: MovePrepare}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := m.WithReplicas([]ShardReplica{
		{Shard: 0, Replica: Replica{Server: 2, State: ReplicaServing}},
		{Shard: 0, Replica: Replica{Server: 1, State: ReplicaWriteOnly}},
		{Shard: 1, Replica: Replica{Server: 0, State: ReplicaServing}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Replicas(0); len(got) != 2 || got[0] != (Replica{2, ReplicaServing}) || got[1] != (Replica{1, ReplicaWriteOnly}) {
		t.Fatalf("replicas of shard 0: %+v", got)
	}
	if r.Replicas(2) != nil || m.Replicas(0) != nil {
		t.Fatal("a shard without replicas, or the original map, has some")
	}
	if got := r.ReplicaCounts(); got[0] != 1 || got[1] != 1 || got[2] != 1 {
		t.Fatalf("replica counts %v", got)
	}
	if r.Replicated() != 2 || len(r.AllReplicas()) != 3 || r.AllReplicas()[2].Shard != 1 {
		t.Fatalf("replicated %d, all %+v", r.Replicated(), r.AllReplicas())
	}
	// Replicas are part of a map's identity: the same version with other
	// replicas is a different map, so Supersedes refuses it as stale.
	if r.Equal(m) || m.Equal(r) {
		t.Fatal("maps that differ by replicas compare equal")
	}
	if _, err := Supersedes(Topology{Map: m}, Topology{Map: r}); !errors.Is(err, ErrStale) {
		t.Fatalf("same version, other replicas: %v", err)
	}
	same, _ := m.WithReplicas([]ShardReplica{
		{Shard: 0, Replica: Replica{Server: 2, State: ReplicaServing}},
		{Shard: 0, Replica: Replica{Server: 1, State: ReplicaWriteOnly}},
		{Shard: 1, Replica: Replica{Server: 0, State: ReplicaServing}},
	})
	if !same.Equal(r) {
		t.Fatal("equal replicas compare unequal")
	}
	for name, bad := range map[string][]ShardReplica{
		"on its owner":        {{Shard: 0, Replica: Replica{Server: 0}}},
		"twice":               {{Shard: 0, Replica: Replica{Server: 1}}, {Shard: 0, Replica: Replica{Server: 1, State: ReplicaServing}}},
		"shard out of range":  {{Shard: 4, Replica: Replica{Server: 1}}},
		"server out of range": {{Shard: 0, Replica: Replica{Server: 3}}},
		"unknown state":       {{Shard: 0, Replica: Replica{Server: 1, State: 7}}},
		"on a moving shard":   {{Shard: 3, Replica: Replica{Server: 2}}},
	} {
		if _, err := m.WithReplicas(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
