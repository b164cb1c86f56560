package shards

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

func FuzzDecode(f *testing.F) {
	good := &Published{Phase: Prepare,
		Members: []MemberState{{Addr: "a:1", Weight: 1}, {Addr: "b:1", Weight: 2, State: assign.Returning, DownAt: 3}},
		Owner:   []int{0, 1, 0, 0},
		Moves:   []MoveEntry{{Shard: 2, From: 0, To: 1}}}
	f.Add(good.Encode())                                                                                                                                                                                                                                                          // a valid batch in prepare
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"up"}],"owner":[0,0,0,0]}`))                                                                                                                                                                                         // final, one member
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"gone"}],"owner":[0,0,0,0]}`))                                                                                                                                                                                       // unknown state
	f.Add([]byte(`{"phase":"handoff","members":[{"addr":"a","weight":1,"state":"up"}],"owner":[0,0,0,0]}`))                                                                                                                                                                       // a phase without moves
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"up"}],"owner":[0,0,0,9]}`))                                                                                                                                                                                         // owner out of range
	f.Add([]byte(`{"members":[]`))                                                                                                                                                                                                                                                // truncated
	f.Add([]byte(`{"phase":"handoff","members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"}],"owner":[0,0,0,0],"moves":[{"shard":1,"from":0,"to":1}]}`))                                                                                            // handoff, owner still the source
	f.Add([]byte(`{"phase":"prepare","members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"}],"owner":[0,0,0,0],"moves":[{"shard":1,"from":0,"to":1},{"shard":1,"from":0,"to":1}]}`))                                                                // a shard moving twice
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"}],"owner":[0,0,0,0],"replicas":[{"shard":1,"member":1,"state":"serving"}]}`))                                                                                              // a serving replica
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"}],"owner":[0,0,0,0],"replicas":[{"shard":1,"member":0,"state":"serving"}]}`))                                                                                              // a replica on its owner
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"}],"owner":[0,0,0,0],"replicas":[{"shard":1,"member":1,"state":"joining"},{"shard":1,"member":1,"state":"leaving"}]}`))                                                     // twice on one member
	f.Add([]byte(`{"phase":"prepare","members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"},{"addr":"c","weight":1,"state":"up"}],"owner":[0,0,0,0],"moves":[{"shard":1,"from":0,"to":1}],"replicas":[{"shard":1,"member":2,"state":"joining"}]}`)) // replicas on a moving shard
	f.Add([]byte(`{"members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"}],"owner":[0,0,0,0],"replicas":[{"shard":1,"member":1,"state":"warm"}]}`))                                                                                                 // unknown replica state
	f.Add([]byte(`{"phase":"prepare","members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"}],"owner":[0,1,0,0],"moves":[{"shard":1,"from":0,"to":1,"phase":"handoff"},{"shard":2,"from":0,"to":1}]}`))                                              // moves in two phases
	f.Add([]byte(`{"phase":"prepare","members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"}],"owner":[0,0,0,0],"moves":[{"shard":1,"from":0,"to":1,"phase":"done"}]}`))                                                                             // a move in an unknown phase
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Decode(b, 4)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to something that decodes equal, and
		// converts to a topology a pool accepts.
		q, err := Decode(p.Encode(), 4)
		if err != nil || !bytes.Equal(q.Encode(), p.Encode()) {
			t.Fatalf("round trip: %v", err)
		}
		if _, err := p.Topology(1); err != nil {
			t.Fatalf("decoded map has no topology: %v", err)
		}
	})
}

// Topology hands the batch to the pools in their phase names, with each
// shard's source and destination, and every member's state and
// incarnation; a move without a source routes by the owner alone.
func TestTopologyCarriesMovesAndIncarnations(t *testing.T) {
	members := []MemberState{
		{Addr: "a:1", Weight: 1},
		{Addr: "b:1", Weight: 1, State: assign.Draining},
		{Addr: "c:1", Weight: 1, State: assign.Returning, DownAt: 7, Incarnation: 7},
		{Addr: "d:1", Weight: 1, State: assign.Down, DownAt: 9, Incarnation: 9},
	}
	for _, tc := range []struct {
		phase Phase
		owner []int // shard 1 moves from b to a, shard 3 from none to a
		want  shardmap.MovePhase
	}{
		{Prepare, []int{0, 1, 0, 0}, shardmap.MovePrepare},
		{Handoff, []int{0, 0, 0, 0}, shardmap.MoveHandoff},
		{Settle, []int{0, 0, 0, 0}, shardmap.MoveSettle},
	} {
		p := &Published{Phase: tc.phase, Members: members, Owner: tc.owner,
			Moves: []MoveEntry{{Shard: 1, From: 1, To: 0}, {Shard: 3, From: -1, To: 0}}}
		p, err := Decode(p.Encode(), 4)
		if err != nil {
			t.Fatalf("%s: %v", tc.phase, err)
		}
		topo, err := p.Topology(12)
		if err != nil {
			t.Fatalf("%s: %v", tc.phase, err)
		}
		if err := topo.Check(4); err != nil {
			t.Fatalf("%s: %v", tc.phase, err)
		}
		m := topo.Map
		if got, want := m.Move(1), (shardmap.Move{From: 1, To: 0, Phase: tc.want}); got != want {
			t.Fatalf("%s: shard 1 moves %+v, want %+v", tc.phase, got, want)
		}
		if m.Moving() != 1 || m.Move(3).Phase != shardmap.MoveNone {
			t.Fatalf("%s: %d moves, shard 3 %+v; want only shard 1", tc.phase, m.Moving(), m.Move(3))
		}
		if m.Owner(1) != tc.owner[1] || m.Version() != 12 {
			t.Fatalf("%s: owner %d v%d", tc.phase, m.Owner(1), m.Version())
		}
		wantMembers := []shardmap.Member{
			{Server: shardmap.Server{Addr: "a:1", Weight: 1}, State: shardmap.MemberActive},
			{Server: shardmap.Server{Addr: "b:1", Weight: 1}, State: shardmap.MemberDraining},
			{Server: shardmap.Server{Addr: "c:1", Weight: 1}, State: shardmap.MemberReturning, Incarnation: 7},
			{Server: shardmap.Server{Addr: "d:1", Weight: 1}, State: shardmap.MemberReturning, Incarnation: 9},
		}
		for i, got := range topo.Members {
			if got != wantMembers[i] {
				t.Fatalf("%s: member %d is %+v, want %+v", tc.phase, i, got, wantMembers[i])
			}
		}
	}
	// A final map moves nothing.
	p := &Published{Members: members, Owner: []int{0, 0, 0, 0}}
	if topo, err := p.Topology(13); err != nil || topo.Map.Moving() != 0 {
		t.Fatalf("final: %v", err)
	}
}

// Decode refuses a batch whose owners contradict its phase: the pools
// would route the shard by one server and move it as if owned by another.
func TestDecodeRefusesOwnerAgainstPhase(t *testing.T) {
	members := []MemberState{{Addr: "a:1", Weight: 1}, {Addr: "b:1", Weight: 1}}
	for _, p := range []*Published{
		{Phase: Prepare, Members: members, Owner: []int{1, 1}, Moves: []MoveEntry{{Shard: 0, From: 0, To: 1}}},
		{Phase: Settle, Members: members, Owner: []int{0, 1}, Moves: []MoveEntry{{Shard: 0, From: 0, To: 1}}},
		{Phase: Handoff, Members: members, Owner: []int{1, 1}, Moves: []MoveEntry{{Shard: 0, From: 1, To: 1}}},
	} {
		if _, err := Decode(p.Encode(), 2); !errors.Is(err, ErrPayload) {
			t.Fatalf("%+v decoded: %v", p, err)
		}
	}
}

// Replicas survive the payload, and only valid ones decode.
func TestReplicasInThePayload(t *testing.T) {
	two := `"members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"}],"owner":[0,0,1,0]`
	p, err := Decode([]byte(`{`+two+`,"replicas":[{"shard":1,"member":1,"state":"serving"},{"shard":2,"member":0,"state":"joining"}]}`), 4)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.Topology(9)
	if err != nil {
		t.Fatal(err)
	}
	if r := top.Map.Replicas(1); len(r) != 1 || r[0] != (shardmap.Replica{Server: 1, State: shardmap.ReplicaServing}) {
		t.Fatalf("shard 1's replicas %+v", r)
	}
	if r := top.Map.Replicas(2); len(r) != 1 || r[0].State != shardmap.ReplicaWriteOnly {
		t.Fatalf("a joining replica is %+v; want write-only", r)
	}
	// A payload of a leader that knew no replicas decodes with none.
	if q, err := Decode([]byte(`{`+two+`}`), 4); err != nil || len(q.Replicas) != 0 {
		t.Fatalf("payload without replicas: %v %+v", err, q)
	}
	for name, bad := range map[string]string{
		"on its owner":  `[{"shard":1,"member":0,"state":"serving"}]`,
		"twice":         `[{"shard":1,"member":1,"state":"serving"},{"shard":1,"member":1,"state":"leaving"}]`,
		"unknown state": `[{"shard":1,"member":1,"state":"warm"}]`,
		"out of range":  `[{"shard":4,"member":1,"state":"serving"}]`,
	} {
		if _, err := Decode([]byte(`{`+two+`,"replicas":`+bad+`}`), 4); !errors.Is(err, ErrPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A map whose moves are in different phases writes each move's phase
// only where it differs from the map's (the least advanced), decodes to
// the same moves, and hands each move to the pools in its own phase. One
// whose owners contradict a move's own phase is refused, and so would be
// a mixed map read by a strata that knows one phase per map.
func TestMovesInDifferentPhases(t *testing.T) {
	p := &Published{
		Members: []MemberState{{Addr: "a:1", Weight: 1}, {Addr: "b:1", Weight: 1, State: assign.Draining}},
		Owner:   []int{0, 0, 1, 0},
		Moves:   []MoveEntry{{Shard: 1, From: 1, To: 0, Phase: Settle}, {Shard: 2, From: 1, To: 0, Phase: Prepare}, {Shard: 3, From: 1, To: 0, Phase: Handoff}},
	}
	p.setPhases()
	b := p.Encode()
	want := `"moves":[{"shard":1,"from":1,"to":0,"phase":"settle"},{"shard":2,"from":1,"to":0},{"shard":3,"from":1,"to":0,"phase":"handoff"}]`
	if p.Phase != Prepare || !bytes.Contains(b, []byte(want)) {
		t.Fatalf("phase %q, encoded %s; want prepare and %s", p.Phase, b, want)
	}
	q, err := Decode(b, 4)
	if err != nil {
		t.Fatal(err)
	}
	top, err := q.Topology(5)
	if err != nil {
		t.Fatal(err)
	}
	for sh, ph := range map[int]shardmap.MovePhase{1: shardmap.MoveSettle, 2: shardmap.MovePrepare, 3: shardmap.MoveHandoff} {
		if mv := top.Map.Move(sh); mv.Phase != ph {
			t.Errorf("shard %d: %+v, want phase %v", sh, mv, ph)
		}
	}
	// Shard 3 in handoff must be owned by its destination.
	bad := bytes.Replace(b, []byte(`"owner":[0,0,1,0]`), []byte(`"owner":[0,0,1,1]`), 1)
	if _, err := Decode(bad, 4); !errors.Is(err, ErrPayload) {
		t.Fatalf("a handoff move owned by its source decoded: %v", err)
	}
	// A reader that ignores per-move phases sees every move in prepare,
	// whose owner must be the source: it refuses the map.
	old := bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(`,"phase":"settle"`), nil), []byte(`,"phase":"handoff"`), nil)
	if _, err := Decode(old, 4); !errors.Is(err, ErrPayload) {
		t.Fatalf("the mixed map read as one phase decoded: %v", err)
	}
}

// A map built in another's room is a copy of its source alone: nothing of
// what the room held shows, and changing the copy leaves the source alone.
func TestCloneIntoOverwritesTheRoom(t *testing.T) {
	room, err := Decode([]byte(`{"phase":"prepare","members":[{"addr":"a","weight":1,"state":"up"},{"addr":"b","weight":1,"state":"up"},{"addr":"c","weight":1,"state":"up"}],"owner":[0,0,2,0],"moves":[{"shard":1,"from":0,"to":1}],"replicas":[{"shard":2,"member":1,"state":"serving"}],"former":{"c":[3]},"layout":[3]}`), 4)
	if err != nil {
		t.Fatal(err)
	}
	src := &Published{Members: []MemberState{{Addr: "x:1", Weight: 2}}, Owner: []int{0, 0, 0, 0}}
	got := src.cloneInto(room)
	if got != room {
		t.Error("cloneInto did not build in the room given")
	}
	if !reflect.DeepEqual(got, src.clone()) || !bytes.Equal(got.Encode(), src.Encode()) {
		t.Fatalf("built in a used room: %s\nwant %s", got.Encode(), src.Encode())
	}
	got.Owner[0], got.Members[0].Weight = 9, 9
	if src.Owner[0] != 0 || src.Members[0].Weight != 2 {
		t.Fatal("the copy shares its lists with the source")
	}
}
