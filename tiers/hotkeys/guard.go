package hotkeys

import (
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// The guard keeps a read rule's copy fills from bringing back a value that
// a write already replaced. It is the layering's promotion sequencer
// (tiers/layered/sequencer.go) applied to copies; the two could share one
// package.
//
//  1. A fill reads its slot's generation before it reads the value.
//  2. With the value in hand it may issue its L1 add only if the generation
//     is unchanged and no write waits; it is then in flight until the add
//     completes.
//  3. A write, once the inner tier acknowledged it, bumps the generation and
//     deletes the copies only when no fill is in flight on the slot;
//     otherwise the last fill to complete resumes it on its own loop.
//
// So an add carrying a value read before the write either lands before
// the write's deletes, which remove it, or is never issued.
const guardSlots = 1024

type guard struct {
	slots [guardSlots]slot
}

type slot struct {
	gen atomic.Uint64

	mu       sync.Mutex // guards inflight and waiters
	inflight int
	waiters  []waiter
}

type waiter struct {
	loop   int
	resume func()
}

func (g *guard) slotFor(key []byte) *slot {
	return &g.slots[(xxhash.Sum64(key)^0x6a09e667f3bcc908)&(guardSlots-1)]
}

func (s *slot) snapshot() uint64 { return s.gen.Load() }

func (s *slot) beginFill(g0 uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen.Load() != g0 || len(s.waiters) > 0 {
		return false
	}
	s.inflight++
	return true
}

func (s *slot) endFill() []waiter {
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

func (s *slot) beginDelete(w waiter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen.Add(1)
	if s.inflight == 0 {
		return true
	}
	s.waiters = append(s.waiters, w)
	return false
}
