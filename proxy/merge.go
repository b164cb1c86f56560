package proxy

import (
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"
)

// Loop merging. One event loop per CPU is what a loaded proxy needs, but
// a lightly loaded one pays for it: each loop's thread sleeps and wakes on
// its own, for the few requests of its own connections, and on a small
// host those wake-ups are most of a request's CPU (docs/benchmarks.md).
// So with Config.MergeLoops, while the loops together are busy about one
// loop's worth or less, the first loop serves them all: the others park on it (gnet.Park) and keep
// their connections, buffers and state, only the thread that runs them
// changes. When the host gets busy, they poll on their own again.
//
// The decision is mergePlan.next, a pure function of the loops' busy
// fractions; the shell (mergeTick) runs on the first loop at the end of its
// rounds and does nothing between windows but compare a clock. With no
// traffic there are no rounds and no decisions: the loops stay as they
// are, each asleep in its own wait, which costs nothing.

// mergeRule is when to merge and split the loops. Busy is the fraction of
// a window a loop spent outside its blocking wait: working, or ready to
// work while the CPU ran something else.
type mergeRule struct {
	// Split: a merged host busier than this splits the loops at once: it
	// is near all one loop can carry.
	Split float64
	// Merge: split loops whose busy fractions sum below this, for Calm
	// windows in a row, merge. Merging drops the wake-ups the separate
	// loops paid, so the host is less busy than the sum it came from
	// (measured: 0.75 to 0.8 of it); Merge is chosen so that the host
	// starts well below Split, and a split host (busier than Split) sums
	// to more than Merge: the two states do not flap.
	Merge float64
	// Window is the length of one measurement, in nanoseconds.
	Window int64
	// Calm is the number of windows under Merge before merging.
	Calm int
}

// defaultMergeRule comes from the busy fractions measured on a two-core
// host (docs/benchmarks.md, "Loop merging"). Single-tier at depth 1 sums
// to about 1.0 split and 0.8 merged, and serves as many requests merged.
// The embedded store at depth 16 sums to 1.5 split and, merged, keeps one
// loop 0.95 busy and serves 13-30 % fewer: a merged host that busy must
// split at once, which puts Split below it; a host between Split and the
// usual 0.8 splits now and then and merges again a second later, which
// costs a few system calls.
var defaultMergeRule = mergeRule{Split: 0.85, Merge: 1.1, Window: 200e6, Calm: 5}

// mergePlan is the state of the decision.
type mergePlan struct {
	merged bool
	calm   int // windows in a row under Merge, while split
}

// next takes one window's busy figure (the sum over the loops that wait on
// their own: while merged, the host's alone) and reports whether the loops
// should change state: merge if split, split if merged.
func (p *mergePlan) next(r mergeRule, busy float64) bool {
	if p.merged {
		if busy > r.Split {
			p.merged, p.calm = false, 0
			return true
		}
		return false
	}
	if busy >= r.Merge {
		p.calm = 0
		return false
	}
	if p.calm++; p.calm < r.Calm {
		return false
	}
	p.merged, p.calm = true, 0
	return true
}

// merger is the shell around mergePlan. Only the host loop's goroutine
// touches it.
type merger struct {
	rule  mergeRule
	plan  mergePlan
	start int64   // the current window's start
	wait  []int64 // each loop's WaitTime at start, by loop index
	// parked marks the loops parked on the host, by loop index.
	parked []bool

	// For stats, from any goroutine: the times the loops merged, and
	// whether they are merged now.
	merges atomic.Uint64
	merged atomic.Bool
}

// mergeTick is the host's end of round: at the end of each window it
// measures and decides. host is s.loops[0], which never parks.
func (s *Server) mergeTick(host *loopState, now int64) {
	m := s.merge
	if now-m.start < m.rule.Window {
		return
	}
	s.mu.Lock()
	loops := s.loops
	s.mu.Unlock()
	for len(m.wait) < len(loops) {
		m.wait = append(m.wait, 0)
		m.parked = append(m.parked, false)
	}
	span := now - m.start
	busy := 0.0
	for i, l := range loops {
		w, err := gnet.WaitTime(l.el)
		if err != nil {
			return // not gnet's own loop: nothing to merge
		}
		if !m.parked[i] && m.start != 0 {
			busy += 1 - float64(int64(w)-m.wait[i])/float64(span)
		}
		m.wait[i] = int64(w)
	}
	first := m.start == 0
	m.start = now
	if first {
		return // the first window only sets the marks
	}
	if m.plan.next(m.rule, busy) {
		m.merged.Store(m.plan.merged)
		if m.plan.merged {
			m.merges.Add(1)
		} else {
			_ = gnet.ReleaseGuests(host.el)
			clear(m.parked)
		}
	}
	if m.plan.merged {
		// Park every loop not parked yet: all of them on a merge, and
		// those registered since, while merged.
		for i, l := range loops[1:] {
			if !m.parked[i+1] {
				m.parked[i+1] = gnet.Park(l.el, host.el) == nil
			}
		}
	}
}
