package loccache

import (
	"fmt"
	"sync/atomic"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
)

// DefaultCapacity is Config.Capacity's default: with entries of about
// 100 bytes, some 6 MiB per event loop.
const DefaultCapacity = 1 << 16

// MaxCapacity bounds Config.Capacity.
const MaxCapacity = 1 << 24

// Config is the cache's size.
type Config struct {
	// Capacity is the most entries the cache holds. Default 65536.
	Capacity int
}

// validate fills a zero Capacity with its default, then checks c.
func (c *Config) validate() error {
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacity
	}
	return c.Validate()
}

// Validate checks c as it is (a zero Capacity is refused; New reads it
// as the default).
func (c Config) Validate() error {
	if c.Capacity < 1 || c.Capacity > MaxCapacity {
		return fmt.Errorf("%d is out of range: 1 to %d entries per event loop", c.Capacity, MaxCapacity)
	}
	return nil
}

// State is a μ-shard's migration state. The values are the location
// table's stored encoding (loctable aliases this type), so they never
// change: Prepare came last and got the next number.
type State uint8

// The states, in the order a migration of epoch e passes through them:
// Prepare, Migrating, Stable (see Location.Serving for who serves).
const (
	// Stable: Owner serves the μ-shard alone.
	Stable State = 1
	// Migrating: Owner serves it; for the grace window its misses read
	// Source, and its writes and deletes also delete at Source.
	Migrating State = 2
	// Prepare: Owner is the destination of a move that has not started:
	// Source still serves, and also deletes at Owner every key it writes
	// or deletes, until every strata has seen this state.
	Prepare State = 3
)

var stateNames = [...]string{Stable: "stable", Migrating: "migrating", Prepare: "prepare"}

func (s State) String() string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// phase orders the states of one epoch: Prepare, Migrating, Stable.
// The zero State is Stable (see Location); an unknown state orders first,
// so it never replaces a known one.
func (s State) phase() int {
	switch s {
	case Prepare:
		return 1
	case Migrating:
		return 2
	case Stable, 0:
		return 3
	}
	return 0
}

// Location is where a μ-shard lives: its owner region, the epoch of that
// ownership (it grows with every migration), and the state of the
// migration that made it.
//
// Invariant (of locations from the table): Source is "" iff State is
// Stable; a zero State is read as Stable (a Location built by hand).
type Location struct {
	Owner string
	Epoch uint64
	State State
	// Source is the previous owner while the state is Prepare or
	// Migrating.
	Source string
}

// Serving is the region that answers for the μ-shard now: the Source
// while a move is in Prepare, otherwise the Owner.
func (l Location) Serving() string {
	if l.State == Prepare && l.Source != "" {
		return l.Source
	}
	return l.Owner
}

// Before reports whether l is an older view of the μ-shard than m: an
// older epoch, or the same epoch at an earlier step of its migration.
func (l Location) Before(m Location) bool {
	if l.Epoch != m.Epoch {
		return l.Epoch < m.Epoch
	}
	return l.State.phase() < m.State.phase()
}

// Stats are the cache's counters since New.
type Stats struct {
	Hits, Misses  uint64
	Evictions     uint64 // entries pushed out to make room
	Invalidations uint64 // entries dropped by Invalidate
}

type slot struct {
	hash  uint64
	rule  int
	field string
	loc   Location
	ref   bool // used since the hand last passed
	used  bool
}

// Cache maps μ-shards to locations, bounded. See the package doc for who
// may call what.
type Cache struct {
	slots []slot
	// index finds a μ-shard's slot by its hash. Invariant: index[h] == i
	// iff slots[i].used and slots[i].hash == h. Two μ-shards with one hash
	// share the index entry: the later Put replaces the earlier.
	index map[uint64]int32
	free  []int32 // unused slots
	hand  int

	hits, misses, evictions, invalidations atomic.Uint64
}

// New returns an empty cache.
func New(cfg Config) (*Cache, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c := &Cache{slots: make([]slot, cfg.Capacity), index: make(map[uint64]int32, cfg.Capacity)}
	c.Reset()
	return c, nil
}

// lookup returns the slot holding id, or -1.
func (c *Cache) lookup(h uint64, id keyrule.ID) int {
	i, ok := c.index[h]
	if !ok {
		return -1
	}
	s := &c.slots[i]
	if s.rule != id.Rule || s.field != string(id.Field) {
		return -1 // another μ-shard with the same hash
	}
	return int(i)
}

// Get returns id's cached location; h is its hash (keyrule.Rules.Hash). It
// counts a hit or a miss and does not allocate.
func (c *Cache) Get(h uint64, id keyrule.ID) (Location, bool) {
	i := c.lookup(h, id)
	if i < 0 {
		c.misses.Add(1)
		return Location{}, false
	}
	c.hits.Add(1)
	c.slots[i].ref = true
	return c.slots[i].loc, true
}

// Put caches loc for id unless a newer view is cached already (a newer
// epoch, or a later state of the same epoch: see Location.Before); it
// reports whether it stored loc. A new entry evicts one when the cache is
// full. id's field is copied: id may borrow a request's key.
func (c *Cache) Put(h uint64, id keyrule.ID, loc Location) bool {
	if i := c.lookup(h, id); i >= 0 {
		s := &c.slots[i]
		if loc.Before(s.loc) {
			return false
		}
		s.loc = loc
		return true
	}
	if i, ok := c.index[h]; ok { // a hash collision: the newcomer takes the slot
		c.drop(int(i))
		c.evictions.Add(1)
	}
	var i int
	if n := len(c.free); n > 0 {
		i, c.free = int(c.free[n-1]), c.free[:n-1]
	} else {
		i = c.victim()
		c.drop(i)
		c.free = c.free[:len(c.free)-1] // drop freed it; take it back
		c.evictions.Add(1)
	}
	// A new entry starts unreferenced: it must earn its second chance
	// with a hit, so one-off μ-shards leave first.
	c.slots[i] = slot{hash: h, rule: id.Rule, field: string(id.Field), loc: loc, used: true}
	c.index[h] = int32(i)
	return true
}

// victim advances the hand to the first used slot whose reference bit is
// clear, clearing the bits it passes. Called only when every slot is used.
func (c *Cache) victim() int {
	for {
		s := &c.slots[c.hand]
		i := c.hand
		c.hand = (c.hand + 1) % len(c.slots)
		if !s.ref {
			return i
		}
		s.ref = false
	}
}

// drop empties slot i and frees it.
func (c *Cache) drop(i int) {
	delete(c.index, c.slots[i].hash)
	c.slots[i] = slot{}
	c.free = append(c.free, int32(i))
}

// Invalidate drops id's entry if its epoch is at most epoch: the epoch a
// request was routed with and the owner refused. A newer entry, put since
// by a fresher read, stays. It reports whether it dropped one.
func (c *Cache) Invalidate(h uint64, id keyrule.ID, epoch uint64) bool {
	i := c.lookup(h, id)
	if i < 0 || c.slots[i].loc.Epoch > epoch {
		return false
	}
	c.drop(i)
	c.invalidations.Add(1)
	return true
}

// Reset empties the cache (the rules changed, so every id may have). The
// counters keep counting.
func (c *Cache) Reset() {
	clear(c.index)
	c.free = c.free[:0]
	for i := len(c.slots) - 1; i >= 0; i-- {
		c.slots[i] = slot{}
		c.free = append(c.free, int32(i))
	}
	c.hand = 0
}

// Len is the number of cached entries.
func (c *Cache) Len() int { return len(c.slots) - len(c.free) }

// Stats returns the counters; safe from any goroutine.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(),
		Evictions: c.evictions.Load(), Invalidations: c.invalidations.Load(),
	}
}

// Change is one location row change the location service saw on its watch
// and hands to the router's caches (the Updater seam between
// control/locality/locsvc and tiers/locality). It is declared here, below
// both, so that the two packages name one type: the router declares
// `type Change = loccache.Change` and satisfies the service's Updater
// interface structurally. Deleted: the row is gone (Loc is zero).
type Change struct {
	Name    string
	Loc     Location
	Deleted bool
}
