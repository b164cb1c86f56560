package memcached

// healthState is a server's standing, as the pool routes by it.
type healthState uint32

const (
	stateUp        healthState = iota // serving
	stateDown                         // marked down; requests fail fast until a probe answers
	stateProbing                      // down, with a probe in flight
	stateReturning                    // a probe answered; not routable until made safe (returning.go)
)

// healthNames are the states as operators see them: probing is a detail
// of being down.
var healthNames = [...]string{"up", "down", "down", "returning"}

func (s healthState) String() string {
	if int(s) < len(healthNames) {
		return healthNames[s]
	}
	return "unknown"
}

// health is the state machine of one server. It is pure: times are
// nanoseconds on any monotonic clock the caller passes in, and it neither
// reads a clock nor starts anything. The server guards it with its mutex.
//
//	up      --threshold failures in a row-->  down
//	up      --a write failed (taint)-->       down
//	down    --probeDue(now >= nextProbe)-->   probing
//	probing   --probe answered-->             returning
//	probing   --probe failed-->               down (next probe one interval later)
//	returning --made safe-->                  up
//	returning --could not make it safe-->     down (next probe one interval later)
//
// Failures and successes of ordinary traffic only count while up: once a
// server is down, nothing but a probe followed by the returning protocol
// brings it back. Invariant: only stateUp is routable.
type health struct {
	state     healthState
	fails     int   // consecutive failures while up
	threshold int   // failures that mark the server down
	interval  int64 // between probes
	nextProbe int64
	downSince int64
	downs     uint64 // times marked down; also the generation of the current down spell
}

func newHealth(threshold int, interval int64) health {
	return health{threshold: threshold, interval: interval}
}

// failure records a failed request or connect. It reports whether the
// server has just been marked down.
func (h *health) failure(now int64) bool {
	if h.state != stateUp {
		return false
	}
	h.fails++
	if h.fails < h.threshold {
		return false
	}
	h.markDown(now)
	return true
}

// taint records that a request which may change the server's data failed
// (or was abandoned unanswered) while the server was up. The server is
// marked down at once, whatever the failure count: only the returning
// protocol can tell when the request has run, or make it not matter. It
// reports whether the server has just been marked down.
func (h *health) taint(now int64) bool {
	if h.state != stateUp {
		return false
	}
	h.markDown(now)
	return true
}

func (h *health) markDown(now int64) {
	h.state = stateDown
	h.downSince = now
	h.nextProbe = now + h.interval
	h.downs++
}

// force marks an up server down at once, for a spell whose first probe
// is due now: the pool wants it flushed before it serves again
// (reentry.go). It reports whether it did; a server already away from up
// is left in its spell.
func (h *health) force(now int64) bool {
	if h.state != stateUp {
		return false
	}
	h.state = stateDown
	h.fails = 0
	h.downSince = now
	h.nextProbe = now
	h.downs++
	return true
}

// success records a reply; it ends a failure streak.
func (h *health) success() {
	if h.state == stateUp {
		h.fails = 0
	}
}

// probeDue reports whether a probe should start now, and if so moves to
// probing.
func (h *health) probeDue(now int64) bool {
	if h.state != stateDown || now < h.nextProbe {
		return false
	}
	h.state = stateProbing
	return true
}

// probeResult records the outcome of the probe in flight. It reports
// whether the server answered and is now returning.
func (h *health) probeResult(ok bool, now int64) bool {
	if h.state != stateProbing {
		return false
	}
	if ok {
		h.state = stateReturning
		return true
	}
	h.state = stateDown
	h.nextProbe = now + h.interval
	return false
}

// returned records the outcome of the returning protocol. It reports
// whether the server is up again.
func (h *health) returned(ok bool, now int64) bool {
	if h.state != stateReturning {
		return false
	}
	if ok {
		h.state = stateUp
		h.fails = 0
		return true
	}
	h.state = stateDown
	h.nextProbe = now + h.interval
	return false
}

// untilProbe is how long to wait, from now, for the next probe.
func (h *health) untilProbe(now int64) int64 {
	if h.state != stateDown {
		return h.interval
	}
	return max(0, h.nextProbe-now)
}
