package hotkeys

// Bounded replies (Rule.Reply = ReplyBounded): the decision, a pure state
// machine with time as an input. The shell (counter_bounded.go) owns the
// lock, the rounds and the table of keys.
//
// What a strata knows of one counter is a single number, total: a lower
// bound of the total the counter will reach once every increment this
// strata issued has landed. It grows by each increment this strata issues
// (before the server acknowledges it) and takes the maximum with every
// exact total a round read (a refresh). A reply is total right after the
// increment's own delta was added, so:
//
//   - replies are computed in issue order under one lock, and never go
//     down while nothing decreases the counter (monotonic per strata, and
//     per connection, since a connection issues its requests in order);
//     an incr that waits for a refresh answers with the view at the
//     refresh's end, so the incrs issued after it wait with it;
//   - a reply counts every increment acknowledged, by any strata, before
//     the issue time of the refresh it builds on, which is at most
//     staleness old (an incr that finds the view older waits for one);
//   - a decrease made elsewhere (decr, set, delete through another strata)
//     shows at the first refresh that reads a total below what the
//     counter must have held when it was issued; total then restarts from
//     that reading. A write other than incr through this strata resets the
//     key once acknowledged.

// boundedStep is what an incr does, decided at its issue.
type boundedStep uint8

const (
	// stepCached: answer total (plus the delta) once the own part acks.
	stepCached boundedStep = iota
	// stepRefresh: as stepCached, and the incr's round also reads every
	// other part, to refresh the view before it gets too old.
	stepRefresh
	// stepWait: the view is too old; the reply waits for the refresh in
	// flight.
	stepWait
	// stepWaitRefresh: the view is too old and nothing refreshes it: this
	// incr's round does, and its reply waits for it like stepWait's.
	stepWaitRefresh
)

func (s boundedStep) waits() bool     { return s == stepWait || s == stepWaitRefresh }
func (s boundedStep) refreshes() bool { return s == stepRefresh || s == stepWaitRefresh }

// boundedKey is one strata's view of one counter.
//
// Invariant: while no decrease reaches the counter, total is at most the
// counter's total once every increment this strata issued has landed.
type boundedKey struct {
	total    uint64
	readAt   int64  // issue time of the refresh total took last; 0: no view
	inflight uint64 // deltas issued and not yet acknowledged or failed
	epoch    uint64 // bumped by reset: refreshes issued before are ignored
	// refreshing: an incr's refresh round is in flight; its completion
	// answers the waiters.
	refreshing bool
	waiters    []*fan // in issue order
}

// snap is what a refresh keeps from its issue to judge what it reads.
type snap struct {
	at    int64
	floor uint64 // total - inflight: the counter held at least this at `at`
	epoch uint64
}

// plan decides the step of an incr issued at now.
func (b *boundedKey) plan(now, staleness int64) boundedStep {
	age := now - b.readAt
	switch {
	case len(b.waiters) > 0:
		// Incrs wait in issue order: a waiter answers with the view as
		// its refresh ends, which counts every incr issued meanwhile, so
		// an incr behind it may not answer sooner from a view another
		// reading renewed (it would answer less than the waiter, and a
		// connection's replies would go down).
		return stepWait
	case b.readAt == 0 || age >= staleness:
		if b.refreshing {
			return stepWait
		}
		return stepWaitRefresh
	case age >= staleness/2 && !b.refreshing:
		// Refresh at half the staleness, so that the view is renewed
		// before it is too old to answer with.
		return stepRefresh
	}
	return stepCached
}

// snapshot is taken when a round that reads every part is issued.
func (b *boundedKey) snapshot(now int64) snap {
	floor := uint64(0)
	if b.readAt != 0 && b.total > b.inflight {
		floor = b.total - b.inflight
	}
	return snap{at: now, floor: floor, epoch: b.epoch}
}

// issue applies an incr of delta issued at now with step, and returns its
// reply (final for the cached steps; waiters get theirs from refreshed).
func (b *boundedKey) issue(delta uint64, step boundedStep) uint64 {
	if step.refreshes() {
		b.refreshing = true
	}
	b.total += delta
	b.inflight += delta
	return b.total
}

// acked says that an issued incr of delta completed: ok, or failed (its
// delta may not have landed, so the view is dropped).
func (b *boundedKey) acked(delta uint64, ok bool) {
	b.inflight -= min(delta, b.inflight)
	if !ok {
		b.reset()
	}
}

// read takes the exact total e read by a round issued at s.at; it tells
// whether the view took it. A reading below s.floor proves a decrease
// (increments alone cannot take the counter below what it held), so the
// view restarts from it; a reading from before a reset is ignored.
func (b *boundedKey) read(e uint64, s snap) bool {
	if s.epoch != b.epoch {
		return false
	}
	if e < s.floor {
		b.total = e
	} else {
		b.total = max(b.total, e)
	}
	b.readAt = max(b.readAt, s.at)
	return true
}

// refreshed ends an incr's refresh round: the view took e if ok. It
// returns the reply every waiter gets: the view's total, or e itself when
// the view did not take it (a reset came between: e is exact, and any
// view older).
func (b *boundedKey) refreshed(e uint64, s snap, ok bool) uint64 {
	b.refreshing = false
	if ok && !b.read(e, s) {
		return e
	}
	return b.total
}

// reset drops the view, after a write other than an increment through
// this strata (or an increment that failed): the next incr refreshes.
func (b *boundedKey) reset() {
	b.epoch++
	b.total = 0
	b.readAt = 0
}
