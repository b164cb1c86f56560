package layered

import (
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// slotCount is the number of key slots that order promotions against
// invalidations. Keys that share a slot only cost each other a skipped
// promotion now and then, never correctness.
const slotCount = 4096

// slotSeed keeps slots independent of the routers' and the sampler's hashes.
const slotSeed = 0x5eed_1a7e_0000_0001

// sequencer enforces the read-your-writes invariant between asynchronous
// promotions and writes:
//
//  1. A promotion reads its slot's generation before it issues the L2 get.
//  2. When the L2 reply arrives, the promotion may issue its L1 add only if
//     the generation is unchanged and no write waits on the slot; it is then
//     counted in flight until the add completes.
//  3. A write bumps the generation after L2 acknowledged it, then issues its
//     L1 invalidation only once no promotion is in flight on the slot.
//
// So an add that carries a value read before the write either lands before
// the write's invalidation (which removes it) or is never issued. An add
// that ends in an error (a timeout) ends step 2 as well, though it may
// still run later than the invalidation; the L1 tier's contract (doc.go)
// is what makes that safe: the server it was sent to serves nothing again
// until flushed after it ran.
type sequencer struct {
	slots [slotCount]slot
}

type slot struct {
	gen atomic.Uint64 // bumped by every write; read without the lock in step 1

	mu       sync.Mutex // guards inflight and waiters
	inflight int
	waiters  []waiter
}

// waiter is a write delayed behind a promotion; it resumes on its own loop.
type waiter struct {
	loop   int
	resume func()
}

func (s *sequencer) slotFor(key []byte) *slot {
	return &s.slots[(xxhash.Sum64(key)^slotSeed)&(slotCount-1)]
}

// snapshot is step 1.
func (sl *slot) snapshot() uint64 { return sl.gen.Load() }

// beginPromotion is step 2: it reports whether the add may be issued.
func (sl *slot) beginPromotion(g0 uint64) bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.gen.Load() != g0 || len(sl.waiters) > 0 {
		return false
	}
	sl.inflight++
	return true
}

// endPromotion ends step 2 and returns the writes that may now invalidate.
func (sl *slot) endPromotion() []waiter {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.inflight--
	if sl.inflight > 0 || len(sl.waiters) == 0 {
		return nil
	}
	w := sl.waiters
	sl.waiters = nil
	return w
}

// beginInvalidation is step 3. It returns true when the caller may
// invalidate now; otherwise w is kept and handed back by endPromotion to
// the goroutine that completes the last promotion in flight, which runs it
// on w's own loop.
func (sl *slot) beginInvalidation(w waiter) bool {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.gen.Add(1)
	if sl.inflight == 0 {
		return true
	}
	sl.waiters = append(sl.waiters, w)
	return false
}

// bumpAll invalidates every snapshot, for flush_all.
func (s *sequencer) bumpAll() {
	for i := range s.slots {
		s.slots[i].gen.Add(1)
	}
}
