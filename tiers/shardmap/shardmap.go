package shardmap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cespare/xxhash/v2"
)

// MaxShards bounds S: owners are stored as uint16 server indexes, and a
// shard id must fit the hash input of Score.
const MaxShards = 1 << 20

// MaxServers bounds the servers of one map (owners are uint16).
const MaxServers = 1 << 16

// Server is one member of the server list a map is computed from.
type Server struct {
	Addr   string
	Weight int // relative share of shards; must be positive
}

// Map assigns each of S shards to one server of a list. It is immutable.
//
// A map has a version: 0 for a map a pool computed itself from its file's
// server list (Rendezvous), 1 and up for the maps a control plane
// publishes, each higher than the one before. Versions order maps that
// reach a pool out of order (see Topology).
type Map struct {
	version uint64
	servers []Server
	owner   []uint16       // owner[shard] is an index into servers
	moves   map[int32]Move // shards with a move in flight; nil when none (move.go)
	// replicas are the read replicas of shards that have any; nil when
	// none (replica.go). Invariant: no shard has both a move and replicas.
	replicas map[int32][]Replica
	// layout is a bit set of the shards still placed by a compat layout,
	// onLayout its population; nil and 0 when none (layout.go).
	layout   []uint64
	onLayout int
}

// ErrInvalid is wrapped by every error New and Rendezvous return.
var ErrInvalid = errors.New("shardmap: invalid map")

// Shard returns the shard of key: xxhash of key with the given seed, mod
// shards. shards must be positive.
func Shard(seed uint64, key []byte, shards int) int {
	var d xxhash.Digest
	d.ResetWithSeed(seed)
	_, _ = d.Write(key)
	return int(d.Sum64() % uint64(shards))
}

// Score is the rendezvous weight of server s for shard: the server with the
// highest score owns the shard. It is -w / ln(u) for u uniform in (0, 1)
// drawn from a hash of (seed, shard, address), which makes the chance of
// winning proportional to the weight (the logarithmic method of weighted
// rendezvous hashing).
func Score(seed uint64, shard int, s Server) float64 {
	var d xxhash.Digest
	d.ResetWithSeed(seed)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(shard))
	_, _ = d.Write(b[:])
	_, _ = d.WriteString(s.Addr)
	h := d.Sum64()
	// 53 random bits mapped into the open interval (0, 1).
	u := (float64(h>>11) + 0.5) / (1 << 53)
	return -float64(s.Weight) / math.Log(u)
}

// Rendezvous computes the static map of shards over servers: each shard
// goes to the server with the highest Score. Ties, which need equal 64-bit
// hashes, go to the earlier server.
func Rendezvous(seed uint64, shards int, servers []Server) (*Map, error) {
	if err := checkList(shards, servers); err != nil {
		return nil, err
	}
	m := &Map{servers: append([]Server(nil), servers...), owner: make([]uint16, shards)}
	for sh := 0; sh < shards; sh++ {
		best, bestScore := 0, math.Inf(-1)
		for i, s := range servers {
			if sc := Score(seed, sh, s); sc > bestScore {
				best, bestScore = i, sc
			}
		}
		m.owner[sh] = uint16(best)
	}
	return m, nil
}

// New builds a map of the given version from an explicit assignment:
// owner[shard] indexes servers. The shard-assignment loop uses it.
func New(version uint64, servers []Server, owner []int) (*Map, error) {
	if err := checkList(len(owner), servers); err != nil {
		return nil, err
	}
	m := &Map{version: version, servers: append([]Server(nil), servers...), owner: make([]uint16, len(owner))}
	for sh, o := range owner {
		if o < 0 || o >= len(servers) {
			return nil, fmt.Errorf("%w: shard %d owned by server %d of %d", ErrInvalid, sh, o, len(servers))
		}
		m.owner[sh] = uint16(o)
	}
	return m, nil
}

func checkList(shards int, servers []Server) error {
	if shards < 1 || shards > MaxShards {
		return fmt.Errorf("%w: %d shards (want 1..%d)", ErrInvalid, shards, MaxShards)
	}
	if len(servers) == 0 || len(servers) > MaxServers {
		return fmt.Errorf("%w: %d servers (want 1..%d)", ErrInvalid, len(servers), MaxServers)
	}
	seen := make(map[string]bool, len(servers))
	for _, s := range servers {
		if s.Addr == "" {
			return fmt.Errorf("%w: empty server address", ErrInvalid)
		}
		if seen[s.Addr] {
			return fmt.Errorf("%w: server %s listed twice", ErrInvalid, s.Addr)
		}
		seen[s.Addr] = true
		if s.Weight < 1 {
			return fmt.Errorf("%w: server %s has weight %d (want >= 1)", ErrInvalid, s.Addr, s.Weight)
		}
	}
	return nil
}

// Version returns the map's version: 0 for a rendezvous map, the
// publisher's number for a map built with New.
func (m *Map) Version() uint64 { return m.version }

// Shards returns S.
func (m *Map) Shards() int { return len(m.owner) }

// Servers returns a copy of the server list, in the order Owner indexes.
func (m *Map) Servers() []Server { return append([]Server(nil), m.servers...) }

// NumServers returns the length of the server list.
func (m *Map) NumServers() int { return len(m.servers) }

// Server returns server i of the list.
func (m *Map) Server(i int) Server { return m.servers[i] }

// Owner returns the index (into Servers) of the server that owns shard.
func (m *Map) Owner(shard int) int { return int(m.owner[shard]) }

// OwnerAddr returns the address of the server that owns shard.
func (m *Map) OwnerAddr(shard int) string { return m.servers[m.owner[shard]].Addr }

// Counts returns how many shards each server owns, indexed like Servers.
func (m *Map) Counts() []int {
	c := make([]int, len(m.servers))
	for _, o := range m.owner {
		c[o]++
	}
	return c
}

// Moved counts the shards whose owner address differs between m and other.
// Both maps must have the same number of shards.
func (m *Map) Moved(other *Map) int {
	if len(m.owner) != len(other.owner) {
		return len(m.owner)
	}
	n := 0
	for sh := range m.owner {
		if m.OwnerAddr(sh) != other.OwnerAddr(sh) {
			n++
		}
	}
	return n
}

// Equal reports whether m and other are the same map: the same version,
// server list (in order, with weights), owner of every shard, moves and
// replicas, and shards on a compat layout.
func (m *Map) Equal(other *Map) bool {
	if m == other {
		return true
	}
	if m == nil || other == nil || m.version != other.version ||
		len(m.servers) != len(other.servers) || len(m.owner) != len(other.owner) {
		return false
	}
	for i := range m.servers {
		if m.servers[i] != other.servers[i] {
			return false
		}
	}
	for i := range m.owner {
		if m.owner[i] != other.owner[i] {
			return false
		}
	}
	return equalMoves(m.moves, other.moves) && equalReplicas(m.replicas, other.replicas) && equalLayout(m, other)
}
