package proxy

import "github.com/strata-cache/strata/tiers"

// Memory per connection. A request needs a slot (its parsed command, its
// tier operations and their results, about 1.3 KiB once used) and, under a
// layered tier, the connection's ordering counts (768 bytes); a connection
// needs them only while it has requests in flight. They are kept per
// event loop rather than per connection, so ten thousand idle client
// connections cost what their gnet and conn structures cost, not what
// their busiest moment needed. The loop's goroutine is the only one that
// takes or gives back, so the pools need no lock; they are bounded, and
// past the bound a returned item is left to the collector.

// Bounds of the loop's pools: enough for every request in flight on a
// busy loop to come back without allocating, small enough that a burst
// does not pin memory (a slot's arena can hold a large value's bytes).
const (
	maxLoopSlots  = 4096
	maxLoopCounts = 1024
)

// phaseCounts counts a connection's operations in flight by phase and key
// bucket (dispatch.go).
type phaseCounts [numPhases][phaseBuckets]uint32

// newSlot takes a slot from the loop's pool, or makes one.
func (cn *conn) newSlot() *slot {
	l := cn.loop
	if n := len(l.slots); n > 0 {
		s := l.slots[n-1]
		l.slots[n-1] = nil
		l.slots = l.slots[:n-1]
		s.cn = cn
		return s
	}
	s := &slot{cn: cn}
	s.onDone = s.opDone
	return s
}

// recycle gives a slot whose operations have all completed (or were never
// issued) back to the loop. Nothing may refer to s afterwards.
func (cn *conn) recycle(s *slot) {
	cn.keys -= len(s.ops)
	s.cmd.Reset()
	s.fixed = s.fixed[:0]
	s.pending = 0
	s.refuse = false
	for i := range s.ops {
		s.ops[i].Req = tiers.Request{}
		s.ops[i].Ctx = nil
	}
	s.ops = s.ops[:0]
	s.cn = nil
	if l := cn.loop; len(l.slots) < maxLoopSlots {
		l.slots = append(l.slots, s)
	}
}

// takeCounts lends a zeroed phaseCounts to a connection about to issue an
// ordered operation.
func (l *loopState) takeCounts() *phaseCounts {
	if n := len(l.counts); n > 0 {
		c := l.counts[n-1]
		l.counts[n-1] = nil
		l.counts = l.counts[:n-1]
		return c
	}
	return new(phaseCounts)
}

// releaseCounts gives the connection's counts back once nothing ordered is
// in flight. Invariant: every count is zero when every inPhase is, so the
// loop's pool holds only zeroed counts.
func (cn *conn) releaseCounts() {
	if cn.inflight == nil {
		return
	}
	for _, n := range cn.inPhase {
		if n != 0 {
			return
		}
	}
	if l := cn.loop; len(l.counts) < maxLoopCounts {
		l.counts = append(l.counts, cn.inflight)
	}
	cn.inflight = nil
}
