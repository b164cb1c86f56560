package proxy

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Memory after a burst of accepts. Each accepted connection leaves garbage:
// about 300 bytes for a plain one (measured; the loop's set of
// connections and gnet's, for one, are copied as they grow), kilobytes
// for a TLS one (Go's accepted connection, which gnet duplicates and
// closes, and the handshake). The heap grows to hold it: the
// collector lets the heap reach twice its live size, and the runtime's
// background scavenger returns to the OS only what lies above that goal.
// Ten thousand clients connecting at once therefore leave the process
// resident at about twice what their connections keep, for good if they
// then sit idle (nothing allocates, so no collection comes).
//
// So once a burst of accepts is over, the server collects and returns the
// free pages to the OS, once (debug.FreeOSMemory). Bounds, so that this
// never costs more than it gives back:
//   - only after scavengeMinAccepts accepts since the last time, and once
//     scavengeQuiet passed without an accept: a steady trickle of
//     connections is left to the runtime;
//   - at most once per scavengeMinGap;
//   - only while the burst's garbage (accepts × acceptGarbage) is at
//     least 1/scavengeMaxCost of the heap's objects: a forced collection
//     marks every live one, so over a large embedded store it would cost
//     far more than it returns, and is skipped;
//   - never on an event loop (it runs on a timer's goroutine), and with
//     no periodic timer: the accept that crosses the threshold arms a
//     one-shot one, so an idle server takes no wakeup for it.
const (
	scavengeMinAccepts = 1024
	scavengeQuiet      = 500 * time.Millisecond
	scavengeMinGap     = 30 * time.Second
	acceptGarbage      = 1 << 10 // a round figure between the two
	scavengeMaxCost    = 8
)

// scavengeState is what the decision reads.
type scavengeState struct {
	accepts  int   // accepts since the last scavenge (or skip)
	last     int64 // nanotime of the latest accept
	lastFree int64 // nanotime of the latest scavenge; 0: none yet
}

// scavengeAction is the decision's answer.
type scavengeAction uint8

const (
	scavengeWait scavengeAction = iota // ask again after the returned wait
	scavengeFree                       // collect and return free memory now
	scavengeSkip                       // not worth it: forget these accepts
)

// scavengeDecide is the pure decision: given the state at now and the
// bytes of heap objects (live, or dead and not yet swept: a bound on what
// a collection marks), what to do. With scavengeWait it also returns how
// long to wait before asking again. Invariant: it is asked only once
// st.accepts reached scavengeMinAccepts.
func scavengeDecide(st scavengeState, now int64, heap uint64) (scavengeAction, time.Duration) {
	if quiet := time.Duration(now - st.last); quiet < scavengeQuiet {
		return scavengeWait, scavengeQuiet - quiet
	}
	if st.lastFree != 0 {
		if since := time.Duration(now - st.lastFree); since < scavengeMinGap {
			return scavengeWait, scavengeMinGap - since
		}
	}
	if uint64(st.accepts)*acceptGarbage*scavengeMaxCost < heap {
		return scavengeSkip, 0
	}
	return scavengeFree, 0
}

// scavenger is the shell around scavengeDecide: the accept goroutines
// report each accept, and a one-shot timer asks the decision once a burst
// may be over. Its methods are safe for concurrent use.
type scavenger struct {
	free func()        // returns free memory to the OS
	heap func() uint64 // bytes of heap objects
	now  func() int64  // monotonic nanoseconds
	// after runs f once d has passed and returns what cancels it.
	after func(d time.Duration, f func()) (cancel func() bool)

	mu      sync.Mutex // guards st, cancel, stopped and runs
	st      scavengeState
	cancel  func() bool // non-nil while armed: a decision is pending
	stopped bool
	runs    int // scavenges done, for tests
}

func newScavenger() *scavenger {
	return &scavenger{free: debug.FreeOSMemory, heap: heapObjectBytes, now: nanotime,
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
}

// accepted notes one accepted connection. It runs on an accept
// goroutine, never on an event loop.
func (sc *scavenger) accepted() {
	now := sc.now()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.st.accepts++
	sc.st.last = now
	if sc.cancel == nil && !sc.stopped && sc.st.accepts >= scavengeMinAccepts {
		sc.cancel = sc.after(scavengeQuiet, sc.fire)
	}
}

// fire asks the decision and acts on it; it runs on the timer's goroutine.
func (sc *scavenger) fire() {
	now := sc.now()
	heap := sc.heap()
	sc.mu.Lock()
	if sc.stopped {
		sc.mu.Unlock()
		return
	}
	act, wait := scavengeDecide(sc.st, now, heap)
	switch act {
	case scavengeWait:
		sc.cancel = sc.after(wait, sc.fire)
		sc.mu.Unlock()
		return
	case scavengeFree:
		sc.st.lastFree = now
		sc.runs++
	}
	sc.st.accepts = 0
	sc.cancel = nil
	sc.mu.Unlock()
	if act == scavengeFree {
		sc.free()
	}
}

// stop disarms the scavenger for good; it is idempotent.
func (sc *scavenger) stop() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.stopped = true
	if sc.cancel != nil {
		sc.cancel()
		sc.cancel = nil
	}
}

// heapObjectBytes is the bytes of heap objects now, live or not yet
// swept. Not the live heap the last collection found: while an embedded
// load holds collection off (tiers/embedded), that may be gigabytes stale.
func heapObjectBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
