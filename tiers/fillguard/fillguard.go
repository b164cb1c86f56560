// Package fillguard keeps an asynchronous copy fill from bringing back a
// value that a write already replaced. A fill reads a value from the tier
// of record and then writes a copy elsewhere (the layering's promotion of
// an L2 hit into L1, the hot-key tier's copies of a hot read key); a write
// of the same key that is acknowledged in between must win.
//
// Keys are hashed into slots, and each slot orders fills against writes:
//
//  1. A fill takes its slot's generation (Snapshot) before it reads the
//     value.
//  2. With the value in hand, it may issue its copy only if the generation
//     is unchanged and no write waits on the slot (BeginFill); it is then in
//     flight until the copy's write completes (EndFill).
//  3. A write, once the tier of record acknowledged it, bumps the generation
//     (BeginWrite) and removes the copies only when no fill is in flight on
//     the slot; otherwise it waits, and EndFill of the last fill in flight
//     hands it back to be resumed on its own event loop.
//
// So a copy carrying a value read before the write either lands before
// the write's deletes, which remove it, or is never issued. Keys that
// share a slot only cost each other a skipped fill now and then, never
// correctness. A copy write that ends in an error ends step 2 as well,
// though it may still run later than the delete; the copy tier's own
// contract (a server that failed a write serves nothing until flushed)
// is what makes that safe.
//
// That orders copies against acknowledged writes. A caller that also
// serves reads from the tier of record while copies are made, and must
// never answer a key older than it answered before (the layering: an L2
// hit, then an L1 hit of the same key), marks its writes from the moment
// they are sent (IssueWrite) until their copies are removed (EndWrite).
// A fill does not begin while a write is marked; a read of the tier of
// record that finds one marked (Writing) may hold the write's new value
// while a copy of the old one is still in flight or not yet removed, so
// it removes the copies itself, as a write does (BeginWrite), before it
// answers.
//
// Nothing here starts goroutines; every method is safe for concurrent use.
package fillguard

import (
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// Guard is a fixed set of slots.
type Guard struct {
	slots []Slot
	mask  uint64
	seed  uint64
}

// New returns a guard of n slots (rounded up to a power of two, at least
// one) whose key hash is mixed with seed, so that its slots are independent
// of the routers' and the sampler's hashes.
func New(n int, seed uint64) *Guard {
	size := 1
	for size < n {
		size <<= 1
	}
	return &Guard{slots: make([]Slot, size), mask: uint64(size - 1), seed: seed}
}

// SlotFor returns the slot of key.
func (g *Guard) SlotFor(key []byte) *Slot {
	return &g.slots[(xxhash.Sum64(key)^g.seed)&g.mask]
}

// BumpAll invalidates every snapshot, for a write of every key
// (flush_all).
func (g *Guard) BumpAll() {
	for i := range g.slots {
		g.slots[i].gen.Add(1)
	}
}

// Slot orders the fills and writes of the keys that hash to it.
type Slot struct {
	gen atomic.Uint64 // bumped by every write; read without the lock in step 1
	// writing counts the writes marked by IssueWrite and not yet ended;
	// changed under mu, so that BeginFill sees it with gen, and read
	// without it by Writing.
	writing atomic.Int32

	mu       sync.Mutex // guards inflight and waiters
	inflight int
	waiters  []Waiter
}

// Waiter is a write delayed behind a fill in flight; Resume runs on Loop.
type Waiter struct {
	Loop   int
	Resume func()
}

// Snapshot is step 1: the slot's generation.
func (s *Slot) Snapshot() uint64 { return s.gen.Load() }

// BeginFill is step 2: it reports whether the copy may be issued.
func (s *Slot) BeginFill(g0 uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen.Load() != g0 || len(s.waiters) > 0 || s.writing.Load() > 0 {
		return false
	}
	s.inflight++
	return true
}

// EndFill ends step 2 and returns the writes that may now remove copies;
// the caller resumes each on its own loop.
func (s *Slot) EndFill() []Waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	if s.inflight > 0 || len(s.waiters) == 0 {
		return nil
	}
	w := s.waiters
	s.waiters = nil
	return w
}

// BeginWrite is step 3. It returns true when the caller may remove the
// copies now; otherwise w is kept and handed back by the EndFill of the
// last fill in flight.
func (s *Slot) BeginWrite(w Waiter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen.Add(1)
	if s.inflight == 0 {
		return true
	}
	s.waiters = append(s.waiters, w)
	return false
}

// IssueWrite marks a write about to be sent to the tier of record; no
// fill begins until its EndWrite.
func (s *Slot) IssueWrite() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writing.Add(1)
}

// EndWrite ends the mark of IssueWrite once the write's copies are
// removed.
func (s *Slot) EndWrite() { s.writing.Add(-1) }

// Writing reports whether a write marked by IssueWrite is under way.
func (s *Slot) Writing() bool { return s.writing.Load() > 0 }
