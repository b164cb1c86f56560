package shards

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// Phase is where a move of the published map stands. Moves planned
// together walk the phases together, but a batch may start while earlier
// ones are still in handoff or settle, so one map can hold moves in
// different phases; a map without moves is final.
type Phase string

// The phases of a move from A to B (the data plane's protocol; the
// leader's part is to publish them in order and wait where it must).
const (
	// Final: no move in flight.
	Final Phase = ""
	// Prepare: A still owns; writes also delete at B. The leader waits
	// until every live agent applied it.
	Prepare Phase = "prepare"
	// Handoff: B owns and fills misses from A; writes also delete at A.
	// The leader waits the grace window.
	Handoff Phase = "handoff"
	// Settle: B owns, writes still delete at A, no more fills. The leader
	// waits until every live agent applied it, then publishes Final.
	Settle Phase = "settle"
)

// MemberState is one member of a published map.
type MemberState struct {
	Addr   string       `json:"addr"`
	Weight int          `json:"weight"`
	State  assign.State `json:"-"`
	// DownAt is the version that declared the member down (0: never, or
	// long enough ago not to matter). It stays while the member is
	// returning: the member is flushed only once every live agent applied
	// a version at least this one, so no proxy still writes to it.
	DownAt uint64 `json:"down_at,omitempty"`
	// Incarnation is the version of the map that last took the member's
	// shards away in a way that may leave it holding stale values (it went
	// down, was undrained once empty, joined the list), and 0 for a member
	// that never lost them so. Versions only grow, so incarnations do too,
	// across leaders and across a member leaving the list and coming back.
	// The pools flush a member listed returning once per incarnation, and
	// flush before routing to one that owns shards under an incarnation
	// newer than the one they knew (shardmap.Member.Incarnation): a pool
	// whose watch skipped the returning map still empties the server.
	Incarnation uint64 `json:"-"`
}

// MoveEntry is one shard moving.
type MoveEntry struct {
	Shard int `json:"shard"`
	From  int `json:"from"` // index into Members; -1 for none, FromLayout for the compat layout
	To    int `json:"to"`
	// Phase is the move's phase when it differs from the map's
	// (Published.Phase, then the least advanced of its moves); "" means
	// the map's. A map whose moves share one phase is written exactly as
	// before moves had phases of their own, so older readers take it; a
	// mixed one they refuse (its owners contradict their phase rule)
	// rather than misroute.
	Phase Phase `json:"phase,omitempty"`
}

// String is the move as tests and logs show it: {shard from to}, and the
// phase when the move has one of its own.
func (mv MoveEntry) String() string {
	if mv.Phase == "" {
		return fmt.Sprintf("{%d %d %d}", mv.Shard, mv.From, mv.To)
	}
	return fmt.Sprintf("{%d %d %d %s}", mv.Shard, mv.From, mv.To, mv.Phase)
}

// phaseOf is the phase mv is in, within p.
func (p *Published) phaseOf(mv MoveEntry) Phase { return cmp.Or(mv.Phase, p.Phase) }

// phaseRank orders the moving phases; 0 for anything else.
func phaseRank(ph Phase) int {
	switch ph {
	case Prepare:
		return 1
	case Handoff:
		return 2
	case Settle:
		return 3
	}
	return 0
}

// setPhases puts every move of p in the phase phaseOf gives it, then
// writes them in p's canonical form: the map's Phase the least advanced
// of its moves' (Final with none), and a move's own Phase only where it
// differs.
func (p *Published) setPhases() {
	if len(p.Moves) == 0 {
		p.Phase = Final
		return
	}
	least := Settle
	for i := range p.Moves {
		mv := &p.Moves[i]
		mv.Phase = p.phaseOf(*mv)
		if phaseRank(mv.Phase) < phaseRank(least) {
			least = mv.Phase
		}
	}
	p.Phase = least
	for i := range p.Moves {
		if p.Moves[i].Phase == least {
			p.Moves[i].Phase = ""
		}
	}
}

// FromLayout is the From of a conversion: a move whose source is the
// tier's compat layout, per key (convert.go).
const FromLayout = -2

// ReplicaState is where a read replica stands (replicas.go).
type ReplicaState string

// The steps of a read replica: joining and leaving take writes' deletes
// only; serving also serves reads. The leader steps one to the next only
// once every live agent applied the one before.
const (
	ReplicaJoining ReplicaState = "joining"
	ReplicaServing ReplicaState = "serving"
	ReplicaLeaving ReplicaState = "leaving"
)

// ReplicaEntry is one read replica of a shard.
type ReplicaEntry struct {
	Shard  int          `json:"shard"`
	Member int          `json:"member"` // index into Members
	State  ReplicaState `json:"state"`
}

// Published is the payload of a tier's versioned map row.
//
// Invariant of a decoded Published: Owner[shard] indexes Members; every
// move names a shard in range, once, and members in range (From may be
// -1), From != To, and the owner its phase implies (From in Prepare, To
// after); Phase is Final exactly when Moves is empty; a replica names a
// shard and a member in range, not the shard's owner, once per shard, and
// no shard has both replicas and a move; Layout lists shards in range,
// once, in order, without replicas, and exactly the FromLayout moves in
// Prepare among its shards' moves.
type Published struct {
	Phase   Phase         `json:"phase,omitempty"`
	Members []MemberState `json:"members"`
	// Owner[shard] is the member that serves the shard now: for a move in
	// Prepare its From, in later phases its To.
	Owner []int       `json:"owner"`
	Moves []MoveEntry `json:"moves,omitempty"`
	// Former lists, by member address, the shards the member handed off
	// since it was last flushed: it may still hold copies of their keys
	// that writes elsewhere have made stale, so no move may bring those
	// shards back to it until it is flushed (which empties its entry).
	Former map[string][]int `json:"former,omitempty"`
	// Replicas are the read replicas of scaled-out shards. A payload
	// without them (an older leader's) decodes with none.
	Replicas []ReplicaEntry `json:"replicas,omitempty"`
	// Layout lists, in order, the shards the tier's compat layout still
	// places (convert.go): their Owner is only where they will go. A
	// shard whose conversion is in Prepare is still listed.
	Layout []int `json:"layout,omitempty"`
}

type memberJSON struct {
	Addr        string `json:"addr"`
	Weight      int    `json:"weight"`
	State       string `json:"state"`
	DownAt      uint64 `json:"down_at,omitempty"`
	Incarnation uint64 `json:"incarnation,omitempty"`
}

// MarshalJSON writes the state by name.
func (m MemberState) MarshalJSON() ([]byte, error) {
	return json.Marshal(memberJSON{Addr: m.Addr, Weight: m.Weight, State: m.State.String(), DownAt: m.DownAt, Incarnation: m.Incarnation})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *MemberState) UnmarshalJSON(b []byte) error {
	var j memberJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	st, ok := assign.ParseState(j.State)
	if !ok {
		return fmt.Errorf("unknown member state %q", j.State)
	}
	*m = MemberState{Addr: j.Addr, Weight: j.Weight, State: st, DownAt: j.DownAt, Incarnation: j.Incarnation}
	return nil
}

// ErrPayload is wrapped by every error Decode returns.
var ErrPayload = errors.New("shards: bad published map")

// Encode returns the row payload of p.
func (p *Published) Encode() []byte {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // plain values only: cannot fail
	}
	return b
}

// Decode parses and checks a payload for a tier of the given number of
// shards.
func Decode(b []byte, shards int) (*Published, error) {
	var p Published
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	if err := p.check(shards); err != nil {
		return nil, err
	}
	return &p, nil
}

func (p *Published) check(shards int) error {
	if len(p.Owner) != shards {
		return fmt.Errorf("%w: %d owners for %d shards", ErrPayload, len(p.Owner), shards)
	}
	n := len(p.Members)
	if n == 0 || n > shardmap.MaxServers {
		return fmt.Errorf("%w: %d members", ErrPayload, n)
	}
	seen := make(map[string]bool, n)
	for _, m := range p.Members {
		if m.Addr == "" || seen[m.Addr] || m.Weight < 1 {
			return fmt.Errorf("%w: member %q (weight %d) empty, repeated or weightless", ErrPayload, m.Addr, m.Weight)
		}
		seen[m.Addr] = true
	}
	for sh, o := range p.Owner {
		if o < 0 || o >= n {
			return fmt.Errorf("%w: shard %d owned by member %d of %d", ErrPayload, sh, o, n)
		}
	}
	switch p.Phase {
	case Final, Prepare, Handoff, Settle:
	default:
		return fmt.Errorf("%w: unknown phase %q", ErrPayload, p.Phase)
	}
	for _, mv := range p.Moves {
		if phaseRank(p.phaseOf(mv)) == 0 {
			return fmt.Errorf("%w: move %v in phase %q", ErrPayload, mv, mv.Phase)
		}
	}
	if (p.Phase == Final) != (len(p.Moves) == 0) {
		return fmt.Errorf("%w: phase %q with %d moves", ErrPayload, p.Phase, len(p.Moves))
	}
	for a, shs := range p.Former {
		if !seen[a] {
			return fmt.Errorf("%w: former shards of %q, not a member", ErrPayload, a)
		}
		for _, sh := range shs {
			if sh < 0 || sh >= shards {
				return fmt.Errorf("%w: former shard %d of %s out of range", ErrPayload, sh, a)
			}
		}
	}
	moving := make(map[int]bool, len(p.Moves))
	for _, mv := range p.Moves {
		if mv.Shard < 0 || mv.Shard >= shards || mv.From < FromLayout || mv.From >= n || mv.To < 0 || mv.To >= n || mv.From == mv.To {
			return fmt.Errorf("%w: move %+v out of range", ErrPayload, mv)
		}
		if moving[mv.Shard] {
			return fmt.Errorf("%w: shard %d moves twice", ErrPayload, mv.Shard)
		}
		moving[mv.Shard] = true
		// The pools read a move's owner from it: Owner must agree.
		want, ph := mv.To, p.phaseOf(mv)
		if ph == Prepare {
			want = mv.From
		}
		if want >= 0 && p.Owner[mv.Shard] != want {
			return fmt.Errorf("%w: shard %d in %s owned by member %d, not %d", ErrPayload, mv.Shard, ph, p.Owner[mv.Shard], want)
		}
	}
	type pair struct{ shard, member int }
	reps := make(map[pair]bool, len(p.Replicas))
	for _, r := range p.Replicas {
		switch {
		case r.Shard < 0 || r.Shard >= shards || r.Member < 0 || r.Member >= n:
			return fmt.Errorf("%w: replica %+v out of range", ErrPayload, r)
		case r.State != ReplicaJoining && r.State != ReplicaServing && r.State != ReplicaLeaving:
			return fmt.Errorf("%w: replica of shard %d in state %q", ErrPayload, r.Shard, r.State)
		case p.Owner[r.Shard] == r.Member:
			return fmt.Errorf("%w: shard %d has a replica on its owner", ErrPayload, r.Shard)
		case reps[pair{r.Shard, r.Member}]:
			return fmt.Errorf("%w: shard %d has two replicas on member %d", ErrPayload, r.Shard, r.Member)
		case moving[r.Shard]:
			return fmt.Errorf("%w: shard %d has replicas and a move", ErrPayload, r.Shard)
		}
		reps[pair{r.Shard, r.Member}] = true
	}
	return p.checkLayout(shards)
}

// Topology is what a pool applies for p at version: the routing owners,
// the moves in the data plane's phases, and every member, with
// down and returning members as returning (they own nothing and must be
// made safe before they serve again) under their incarnation.
//
// A move without a source (From -1) has nothing to fill from or delete
// at: the pools route its shard by the owner alone.
func (p *Published) Topology(version uint64) (shardmap.Topology, error) {
	servers := make([]shardmap.Server, len(p.Members))
	members := make([]shardmap.Member, len(p.Members))
	for i, m := range p.Members {
		servers[i] = shardmap.Server{Addr: m.Addr, Weight: m.Weight}
		st := shardmap.MemberActive
		switch m.State {
		case assign.Draining:
			st = shardmap.MemberDraining
		case assign.Down, assign.Returning:
			st = shardmap.MemberReturning
		}
		members[i] = shardmap.Member{Server: servers[i], State: st, Incarnation: m.Incarnation}
	}
	var moves []shardmap.ShardMove
	for _, mv := range p.Moves {
		switch {
		case mv.From == FromLayout:
			moves = append(moves, shardmap.ShardMove{Shard: mv.Shard, Move: shardmap.Move{From: shardmap.FromLayout, To: mv.To, Phase: p.phaseOf(mv).moving()}})
		case mv.From >= 0:
			moves = append(moves, shardmap.ShardMove{Shard: mv.Shard, Move: shardmap.Move{From: mv.From, To: mv.To, Phase: p.phaseOf(mv).moving()}})
		}
	}
	m, err := shardmap.NewMoving(version, servers, p.Owner, moves)
	if err != nil {
		return shardmap.Topology{}, err
	}
	if len(p.Replicas) > 0 {
		reps := make([]shardmap.ShardReplica, len(p.Replicas))
		for i, r := range p.Replicas {
			st := shardmap.ReplicaWriteOnly
			if r.State == ReplicaServing {
				st = shardmap.ReplicaServing
			}
			reps[i] = shardmap.ShardReplica{Shard: r.Shard, Replica: shardmap.Replica{Server: r.Member, State: st}}
		}
		if m, err = m.WithReplicas(reps); err != nil {
			return shardmap.Topology{}, err
		}
	}
	if len(p.Layout) > 0 {
		if m, err = m.WithLayout(p.Layout); err != nil {
			return shardmap.Topology{}, err
		}
	}
	return shardmap.Topology{Map: m, Members: members}, nil
}

// moving is the data plane's name for ph (MoveNone for Final).
func (ph Phase) moving() shardmap.MovePhase {
	switch ph {
	case Prepare:
		return shardmap.MovePrepare
	case Handoff:
		return shardmap.MoveHandoff
	case Settle:
		return shardmap.MoveSettle
	}
	return shardmap.MoveNone
}

// clone returns a deep copy, for a leader that edits the next map.
func (p *Published) clone() *Published { return p.cloneInto(nil) }

// cloneInto makes c a deep copy of p in the room of c's lists and returns
// it; c nil: a new map. A leader builds each round's map in the one its
// last round built and did not publish, rather than copy S owners afresh
// twice a second. Empty lists copy as nil.
func (p *Published) cloneInto(c *Published) *Published {
	if c == nil {
		c = &Published{}
	}
	c.Phase = p.Phase
	c.Members = copyInto(c.Members, p.Members)
	c.Owner = copyInto(c.Owner, p.Owner)
	c.Moves = copyInto(c.Moves, p.Moves)
	c.Replicas = copyInto(c.Replicas, p.Replicas)
	c.Layout = copyInto(c.Layout, p.Layout)
	c.Former = nil
	if len(p.Former) > 0 {
		c.Former = make(map[string][]int, len(p.Former))
		for a, shs := range p.Former {
			c.Former[a] = append([]int(nil), shs...)
		}
	}
	return c
}

// copyInto returns a copy of src in dst's room; empty: nil.
func copyInto[T any](dst, src []T) []T {
	if len(src) == 0 {
		return nil
	}
	return append(dst[:0], src...)
}

// index returns the member index of addr, or -1.
func (p *Published) index(addr string) int {
	for i, m := range p.Members {
		if m.Addr == addr {
			return i
		}
	}
	return -1
}

// formerOwner reports whether member addr handed shard off since its last
// flush.
func (p *Published) formerOwner(addr string, shard int) bool {
	for _, sh := range p.Former[addr] {
		if sh == shard {
			return true
		}
	}
	return false
}

// handedOff records that the member at index from gave shard up.
func (p *Published) handedOff(from, shard int) {
	if from < 0 || from >= len(p.Members) {
		return
	}
	a := p.Members[from].Addr
	if p.formerOwner(a, shard) {
		return
	}
	if p.Former == nil {
		p.Former = map[string][]int{}
	}
	p.Former[a] = append(p.Former[a], shard)
}
