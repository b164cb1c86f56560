package proxy

import (
	"sync/atomic"
	"syscall"

	"github.com/panjf2000/gnet/v2"
)

// Loop merging. One event loop per CPU is what a loaded proxy needs, but
// a lightly loaded one pays for it: each loop's thread sleeps and wakes on
// its own, for the few requests of its own connections, and on a small
// host those wake-ups are most of a request's CPU (docs/benchmarks.md).
// So with Config.MergeLoops, while the loops together are busy about one
// loop's worth or less, the first loop serves them all: the others park on it (gnet.Park) and keep
// their connections, buffers and state, only the thread that runs them
// changes. When the host gets busy, they poll on their own again for a
// few windows, and stay so if that serves more requests.
//
// The decision is mergePlan.next, a pure function of the loops' busy
// fractions, the process's CPU time and the rate they serve; the shell
// (mergeTick) runs on the first loop at the end of its rounds and does
// nothing between windows but compare a clock. With no
// traffic there are no rounds and no decisions: the loops stay as they
// are, each asleep in its own wait, which costs nothing.

// mergeRule is when to merge and split the loops. Busy is the fraction of
// a window a loop spent outside its blocking wait: working, or ready to
// work while the CPU ran something else. On a small shared host the two
// read alike, so a busy merged loop is not taken to be a saturated one:
// it splits as a probe, and stays split only if the split loops serve
// more. For the same reason split loops merge on the CPU the process
// used, the work itself, and not on their summed busy fractions, which
// count each loop's waits for a core as work (measured on two cores:
// single-tier and L1/L2 at depth 1 split read 0.9 to 1.4 busy summed and
// 0.62 to 0.84 of a core; docs/benchmarks.md). Rate is what the loops
// served in a window: the bytes their clients sent, per nanosecond.
type mergeRule struct {
	// Probe: a merged host busier than this for Measure windows in a row
	// splits, to see whether the loops serve more split.
	Probe float64
	// Gain: the probe keeps the loops split if over the Measure windows
	// after the split they served at least Gain times the merged host's
	// mean rate over the Measure windows before it; otherwise they merge
	// again. One window's rate moves by a fifth on a noisy host, so the
	// comparison is of means.
	Gain    float64
	Measure int
	// Hold: after a probe that found no gain, the host does not probe for
	// Hold windows, doubled after each such probe in a row up to MaxShift
	// doublings; unless its rate rises to Rise times the rate it probed
	// at: a heavier load is a new question. A merge holds likewise, for
	// Hold windows at the rate the loops served while calm: it found the
	// work fitting on one thread, and asking again at once, under the same
	// load, costs a probe's windows split for nothing.
	Hold int
	Rise float64
	// Merge: split loops merge after Calm windows in a row in which the
	// process used less CPU than this, in cores: all of its work would
	// fit on one thread. Merging drops the wake-ups the separate loops
	// paid, so the host needs less than the process used (measured: 0.75
	// to 0.8 of it). After a probe that found the split loops serving
	// more, the count needed doubles, up to MaxShift doublings, so that a
	// load that wants two loops but uses under Merge is probed ever more
	// rarely.
	Merge float64
	Calm  int
	// MaxShift caps the doublings of Hold and Calm.
	MaxShift int
	// Window is the length of one measurement, in nanoseconds.
	Window int64
}

// defaultMergeRule comes from the figures measured on a two-core host
// (docs/benchmarks.md, "Loop merging"). Merged, single-tier at depth 1
// is 0.79 busy and serves as many requests as split; the embedded store
// is 0.91 busy at depth 1 and 0.95 at depth 16, where it serves 13-30 %
// fewer. So every busy merged host probes, and the rate decides: a probe
// costs Measure windows split, at most once per Hold windows (5 s, then
// 10 s, ... 80 s) while merging keeps winning. Split, single-tier and
// L1/L2 at depth 1 use 0.62 to 0.84 of a core, the embedded store 0.79 to
// 1.0 at depth 1 and 0.9 to 1.1 at depth 16: Merge lies between, and a
// window of the embedded store under it is rarely one of five in a row.
// A probe keeps the loops split only for a clear gain: merged, a request
// that takes two hops (L1/L2) waits a little behind the host's other
// work, so a closed loop of clients is served a few percent slower
// (probes of L1/L2 at depth 1 read 1.06, 1.13 and 1.25) for a quarter less
// CPU a request, while a saturated host gains more (the embedded store at
// depth 16 served 1.15 to 1.43 times as much split).
var defaultMergeRule = mergeRule{
	Probe: 0.7, Gain: 1.15, Measure: 4,
	Hold: 25, Rise: 1.25,
	Merge: 0.85, Calm: 5,
	MaxShift: 4,
	Window:   200e6,
}

// mergeWindow is one window's measurements: busy is summed over the loops
// that wait on their own (while merged, the host's alone); cpu is the
// process's CPU time per nanosecond of the window, over all its threads;
// rate is over all loops.
type mergeWindow struct {
	busy, cpu, rate float64
}

// mergePlan is the state of the decision.
type mergePlan struct {
	merged  bool
	calm    int     // windows in a row under Merge, while split
	calmSum float64 // and their rates summed
	hold    int     // windows before the merged host may probe again

	// The busy merged windows in a row, and their rates summed: a probe
	// starts after Measure of them, and compares with their mean.
	run    int
	runSum float64
	// A probe in progress: windows left to measure, the merged rate it
	// compares with, and the split rate summed so far.
	probe     int
	base, sum float64
	heldAt    float64 // the rate of the last probe that found no gain
	calmShift int     // doublings of Calm
	holdShift int     // doublings of Hold
}

// next takes one window's measurements and reports whether the loops
// should change state: merge if split, split if merged.
func (p *mergePlan) next(r mergeRule, w mergeWindow) bool {
	switch {
	case p.probe > 0:
		p.sum += w.rate
		if p.probe--; p.probe > 0 {
			return false
		}
		if p.sum/float64(r.Measure) >= p.base*r.Gain {
			p.calmShift, p.holdShift = min(p.calmShift+1, r.MaxShift), 0
			p.calm, p.calmSum = 0, 0
			return false
		}
		p.merged, p.hold, p.heldAt = true, r.Hold<<p.holdShift, p.base
		p.holdShift, p.calmShift = min(p.holdShift+1, r.MaxShift), 0
		return true
	case p.merged:
		if w.busy <= r.Probe {
			p.run, p.runSum = 0, 0
			p.hold = max(p.hold-1, 0)
			return false
		}
		if p.hold > 0 && w.rate < p.heldAt*r.Rise {
			p.hold--
			return false
		}
		if p.run, p.runSum = p.run+1, p.runSum+w.rate; p.run < r.Measure {
			return false
		}
		p.merged, p.hold = false, 0
		p.probe, p.base, p.sum = r.Measure, p.runSum/float64(p.run), 0
		p.run, p.runSum = 0, 0
		return true
	}
	if w.cpu >= r.Merge {
		p.calm, p.calmSum = 0, 0
		return false
	}
	if p.calm, p.calmSum = p.calm+1, p.calmSum+w.rate; p.calm < r.Calm<<p.calmShift {
		return false
	}
	p.merged, p.hold, p.heldAt = true, r.Hold, p.calmSum/float64(p.calm)
	p.calm, p.calmSum = 0, 0
	return true
}

// merger is the shell around mergePlan. Only the host loop's goroutine
// touches it.
type merger struct {
	rule  mergeRule
	plan  mergePlan
	start int64   // the current window's start
	wait  []int64 // each loop's WaitTime at start, by loop index
	read  uint64  // the client bytes all loops had read at start
	cpu   int64   // the process's CPU time at start, in nanoseconds
	// parked marks the loops parked on the host, by loop index.
	parked []bool

	// For stats, from any goroutine: the times the loops merged, the
	// times a busy merged host split to probe, and whether they are
	// merged now.
	merges, probes atomic.Uint64
	merged         atomic.Bool
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
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return // no measure of the work, no decision
	}
	span := now - m.start
	read := uint64(0)
	for i := range s.stats.blocks {
		read += s.stats.blocks[i].bytesRead.Load()
	}
	w := mergeWindow{rate: float64(read-m.read) / float64(span)}
	m.read = read
	cpu := ru.Utime.Nano() + ru.Stime.Nano()
	w.cpu = float64(cpu-m.cpu) / float64(span)
	m.cpu = cpu
	for i, l := range loops {
		waited, err := gnet.WaitTime(l.el)
		if err != nil {
			return // not gnet's own loop: nothing to merge
		}
		if !m.parked[i] && m.start != 0 {
			w.busy += 1 - float64(int64(waited)-m.wait[i])/float64(span)
		}
		m.wait[i] = int64(waited)
	}
	first := m.start == 0
	m.start = now
	if first {
		return // the first window only sets the marks
	}
	if m.plan.next(m.rule, w) {
		m.merged.Store(m.plan.merged)
		if m.plan.merged {
			m.merges.Add(1)
		} else { // a merged host splits only to probe
			m.probes.Add(1)
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
