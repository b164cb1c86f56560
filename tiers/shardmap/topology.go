package shardmap

import (
	"errors"
	"fmt"
)

// MemberState is what the control plane says of one member of a pool.
// Health (up or down) is each proxy's own observation and is not part of
// a topology.
type MemberState uint8

const (
	// MemberActive may own shards.
	MemberActive MemberState = iota
	// MemberDraining is being emptied for maintenance: it keeps its
	// connections (moves read from it during their grace window) while its
	// shards leave.
	MemberDraining
	// MemberReturning came back after its shards failed over. It may hold
	// values overwritten elsewhere meanwhile, so it owns no shard until it
	// has been flushed.
	MemberReturning
)

var memberStateNames = [...]string{"active", "draining", "returning"}

func (s MemberState) String() string {
	if int(s) < len(memberStateNames) {
		return memberStateNames[s]
	}
	return "unknown"
}

// Member is one server of a pool as a topology names it.
type Member struct {
	Server
	State MemberState
	// Incarnation counts the times the server lost its shards in a way
	// that can leave it holding values overwritten elsewhere (a failover
	// away from it, a removal) and was let back. The control plane bumps
	// it when it lists the server as returning again; it never decreases.
	// A pool flushes a member before routing to it whenever the member is
	// returning, or owns shards under an incarnation newer than the one
	// the pool knew, unless the pool already flushed that incarnation.
	Incarnation uint64
}

// Topology is what a pool serves from: the shard map and every server the
// pool keeps connections to. A pool applies one whole, with one atomic
// store, so no request sees the map of one topology with the members of
// another.
//
// Invariant of a checked topology: Members names every server of Map
// (servers that own nothing now, such as draining or returning ones, are
// members too), each once.
type Topology struct {
	// Map assigns shards; its Version is the topology's.
	Map *Map
	// Members are the servers to keep connections to. Nil means the
	// servers of Map, all active.
	Members []Member
}

// ErrStale is wrapped by the error Supersedes returns for a topology that
// is not newer than the one in force: watch events can arrive late, and a
// late one must not undo a newer map.
var ErrStale = errors.New("shardmap: stale topology")

// Version returns the version of t's map; 0 when it has none.
func (t Topology) Version() uint64 {
	if t.Map == nil {
		return 0
	}
	return t.Map.Version()
}

// MemberList returns Members, or the servers of Map, all active, when
// Members is nil. The slice is new.
func (t Topology) MemberList() []Member {
	if t.Members != nil {
		return append([]Member(nil), t.Members...)
	}
	if t.Map == nil {
		return nil
	}
	out := make([]Member, t.Map.NumServers())
	for i := range out {
		out[i] = Member{Server: t.Map.Server(i)}
	}
	return out
}

// Check validates t for a pool of the given number of shards: a map of
// that many shards, members listed once each with a positive weight and a
// known state, and every server of the map a member.
func (t Topology) Check(shards int) error {
	if t.Map == nil {
		return fmt.Errorf("%w: topology without a map", ErrInvalid)
	}
	if t.Map.Shards() != shards {
		return fmt.Errorf("%w: map of %d shards for a pool of %d", ErrInvalid, t.Map.Shards(), shards)
	}
	if t.Members == nil {
		return nil
	}
	seen := make(map[string]bool, len(t.Members))
	for _, m := range t.Members {
		switch {
		case m.Addr == "":
			return fmt.Errorf("%w: member with an empty address", ErrInvalid)
		case seen[m.Addr]:
			return fmt.Errorf("%w: member %s listed twice", ErrInvalid, m.Addr)
		case m.Weight < 1:
			return fmt.Errorf("%w: member %s has weight %d (want >= 1)", ErrInvalid, m.Addr, m.Weight)
		case int(m.State) >= len(memberStateNames):
			return fmt.Errorf("%w: member %s has state %d", ErrInvalid, m.Addr, m.State)
		}
		seen[m.Addr] = true
	}
	for i := 0; i < t.Map.NumServers(); i++ {
		if a := t.Map.Server(i).Addr; !seen[a] {
			return fmt.Errorf("%w: the map names %s, which is not a member", ErrInvalid, a)
		}
	}
	return nil
}

// Equal reports whether t and other are the same topology: equal maps and
// the same member list.
func (t Topology) Equal(other Topology) bool {
	if !t.Map.Equal(other.Map) {
		return false
	}
	a, b := t.MemberList(), other.MemberList()
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Supersedes decides whether next replaces cur, the topology in force. A
// higher version replaces it. The same topology again (a watch replaying
// an event) is no change: false, nil. Anything else, an older version or a
// different topology under the same version, is ignored with an error
// wrapping ErrStale. It is a pure function of the two values.
func Supersedes(cur, next Topology) (bool, error) {
	cv, nv := cur.Version(), next.Version()
	switch {
	case nv > cv:
		return true, nil
	case nv == cv && cur.Equal(next):
		return false, nil
	case nv == cv:
		return false, fmt.Errorf("%w: version %d differs from the version %d in force", ErrStale, nv, cv)
	default:
		return false, fmt.Errorf("%w: version %d is older than the version %d in force", ErrStale, nv, cv)
	}
}
