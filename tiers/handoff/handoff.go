package handoff

import "github.com/strata-cache/strata/tiers"

// Step is a sub-request the machine asks its shell to send, or Done.
type Step uint8

const (
	// Done: the client's answer is in its Result; the shell calls its Done.
	Done Step = iota
	// Primary: the client's write, as it came, at the primary end.
	Primary
	// Other: md k at other end Action.Index, for a write.
	Other
	// Read: the client's request, as it came, at Action.End; a fill's
	// placeholder in the answer reads as a miss (see Rules.MaskPlaceholders).
	Read
	// Lease: mg k N<Rules.LeaseTTL> with v, c, f and t at the primary end.
	Lease
	// Source: mg k v f t u at the other end (index 0), for the lease's taker.
	Source
	// Fill: ms k C<lease> T<FillTTL> with the source's value, at the primary.
	Fill
	// Release: md k C<lease> at the primary, dropping a placeholder the
	// fill will not replace.
	Release
)

var stepNames = [...]string{"done", "primary", "other", "read", "lease", "source", "fill", "release"}

func (s Step) String() string {
	if int(s) < len(stepNames) {
		return stepNames[s]
	}
	return "step?"
}

// End is one side of a handoff.
type End uint8

const (
	// AtPrimary is where the client's request belongs now: a write's
	// owner, a fill's destination (the new owner, or a read replica).
	AtPrimary End = iota
	// AtOther is the other side: where a write deletes, the source a
	// fill reads from.
	AtOther
)

func (e End) String() string {
	if e == AtOther {
		return "other"
	}
	return "primary"
}

// Event is something a shell may count, reported with the Action that
// follows it.
type Event uint8

const (
	NoEvent Event = iota
	// OtherFailed: a delete at an other end failed; the write will be
	// answered with that error, never acknowledged. Reported once per
	// write, at its first failed delete.
	OtherFailed
	// LeaseMiss: another reader holds the fill's lease; the client is
	// answered a miss.
	LeaseMiss
	// Filled: the fill stored the source's value, which the client gets.
	Filled
	// FillLost: the source had a value but the fill did not store it (an
	// expiring or unstorable TTL, the handoff no longer in force, or a
	// write at the primary after the lease).
	FillLost
)

var eventNames = [...]string{"", "other-failed", "lease-miss", "filled", "fill-lost"}

func (e Event) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return "event?"
}

// Action is what the shell does next: send the sub-request the machine
// wrote (Step, at End; Index picks among a write's other ends), or, for
// Done, answer the client. Event, if any, happened on the way.
type Action struct {
	Step  Step
	End   End
	Index int
	Event Event
}

// Rules are a caller's settings of the protocol; each field is a
// difference between callers that is on purpose, and says why.
type Rules struct {
	// LeaseTTL is the TTL, in seconds, of the placeholder a fill's lease
	// creates: long enough for the source read, short enough that the
	// placeholder of a fill whose shell died does not hide the key long.
	LeaseTTL int64
	// MaxTTL bounds the TTL a fill stores (FillTTL); 0 for none. A tier
	// whose data must be gone from a place by a deadline (a μ-shard's
	// region, before it may return there) sets it.
	MaxTTL int64
	// MaskPlaceholders makes every Read answer a placeholder as a miss.
	// Without it only a plain read (tiers.Request.IsRead) does: a client
	// that uses leases itself (N, R) or touches gets memcached's own
	// answer, W and Z flags included. A tier that reads through a
	// layering, or whose clients never see a fill's placeholder as their
	// own lease, sets it.
	MaskPlaceholders bool
	// ReadOtherOnLostLease answers a fill that finds another reader's
	// lease by reading the client's request at the other end, rather than
	// with a miss. A read replica does: its other end, the owner, is
	// authoritative and serving, and a replica exists to spread reads,
	// not to miss them.
	ReadOtherOnLostLease bool
}

// Machine is one client request's handoff: from Write, Read or Fill to
// Done, one sub-request at a time. It has no goroutine, no clock and does
// no I/O: it writes each sub-request into the Request given to Init and
// the answer into the client's Result, and the shell sends, waits and
// feeds the answer back with Next. The zero Machine is ready for Init; a
// Machine is reusable after Done.
type Machine struct {
	rules  *Rules
	client *tiers.Op
	sub    *tiers.Request
	key    []byte
	step   Step // the sub-request in flight; Done when none

	// A write's progress. Invariant: next <= others; the primary has run
	// (primaryDone) before the first other end unless otherFirst, and
	// after the last one if otherFirst.
	others, next            int
	otherFirst, primaryDone bool
	failed                  bool  // a delete at an other end failed
	failErr                 error // the first such failure

	lease uint64 // the CAS of the fill's placeholder at the primary
}

// Init readies m for client's request. key is the key the sub-requests
// use (client.Req.Key, or a copy the shell keeps); sub is where each
// sub-request is written, and must not change until the answer is given
// to Next. rules must stay unchanged while m runs.
func (m *Machine) Init(rules *Rules, client *tiers.Op, key []byte, sub *tiers.Request) {
	*m = Machine{rules: rules, client: client, sub: sub, key: key}
}

// Write starts a write (tiers.Request.IsWrite, or a touch a caller
// treats as one): the client's request at the primary end, and md k at
// each of others other ends, in order, before the client is answered.
// source is the end that fills read from in the caller's phase of the
// move (AtPrimary: a move's prepare, a replica's owner, a region's
// Prepare; AtOther: a move's handoff and settle, a region's Migrating and
// just-settled window): the write runs there first, then at the other
// side, whatever its kind. Run the other way, a fill whose lease comes
// after the write reached the destination, and whose source read comes
// before it reached the source, stores the old value, and nothing at the
// destination makes its store fail: after a delete, or a set that is gone
// again before the fill (already expired, evicted), the old value would
// be read after the acknowledgement. Every end is written whatever the
// others answered (a write that failed for a timeout may still have been
// applied). If a delete at an other end fails, the client gets that
// error; else the primary's answer.
func (m *Machine) Write(others int, source End) Action {
	m.others = others
	m.otherFirst = source == AtOther
	if m.otherFirst {
		return m.writeNext(NoEvent)
	}
	return m.primary()
}

// Read starts a read of the client's request at the primary end, where a
// fill's placeholder may be about: a placeholder reads as a miss (see
// Rules.MaskPlaceholders), anything else is answered as it is.
func (m *Machine) Read() Action { return m.read(AtPrimary, NoEvent) }

// Fill starts a plain read (tiers.Request.IsRead) at the destination that
// fills a miss from the source: a lease at the primary; its taker reads
// the other end, checks the handoff is still in force and stores with the
// lease's CAS, serving the source's value only if that stored. A hit at
// the primary is served; a lease another reader holds answers a miss (or,
// under Rules.ReadOtherOnLostLease, reads the other end).
func (m *Machine) Fill() Action {
	m.step = Lease
	*m.sub = m.client.Req
	r := m.sub
	r.Text = false // a text get hands out no win token
	r.Vivify, r.VivifyTTL = true, m.rules.LeaseTTL
	r.WantValue, r.WantCAS, r.WantFlags, r.WantTTL = true, true, true, true
	return Action{Step: Lease, End: AtPrimary}
}

// Next takes the answer res to the sub-request in flight and returns what
// to do next. inForce reports whether the handoff the request started
// under is still in force (the same source and destination, still
// filling); it is called only between a fill's source read and its
// store, and must be read there and then: once a caller stops filling, no
// fill of its own may store a value read before that. Next panics when
// nothing is in flight.
func (m *Machine) Next(res *tiers.Result, inForce func() bool) Action {
	c := &m.client.Res
	switch m.step {
	case Primary:
		if !m.failed {
			CopyResult(c, res)
		}
		return m.writeNext(NoEvent)
	case Other:
		ev := NoEvent
		if res.Status == tiers.StatusError {
			if !m.failed {
				ev, m.failErr = OtherFailed, res.Err
			}
			m.failed = true
		}
		return m.writeNext(ev)
	case Read:
		if Placeholder(res) && (m.rules.MaskPlaceholders || m.client.Req.IsRead()) {
			return m.miss(NoEvent)
		}
		CopyResult(c, res)
		return m.done(NoEvent)
	case Lease:
		switch {
		case res.Status == tiers.StatusError:
			CopyResult(c, res)
			return m.done(NoEvent)
		case res.Win:
			m.lease = res.CAS
			m.step = Source
			*m.sub = tiers.Request{Kind: tiers.KindGet, Key: m.key, KeyBinary: m.client.Req.KeyBinary,
				WantValue: true, WantFlags: true, WantTTL: true, NoBump: true}
			return Action{Step: Source, End: AtOther}
		case res.Status != tiers.StatusHit || res.AlreadyWon || res.Stale:
			if m.rules.ReadOtherOnLostLease {
				return m.read(AtOther, NoEvent)
			}
			return m.miss(LeaseMiss)
		}
		CopyResult(c, res)
		return m.done(NoEvent)
	case Source:
		if res.Status != tiers.StatusHit {
			return m.release(NoEvent)
		}
		ttl, ok := FillTTL(res.TTL, m.rules.MaxTTL)
		if !ok || !inForce() {
			return m.release(FillLost)
		}
		c.Reset()
		c.Value = append(c.Value, res.Value...)
		c.ClientFlags, c.TTL, c.Size = res.ClientFlags, ttl, len(res.Value)
		if ttl == 0 {
			c.TTL = -1 // stored to never expire, as mg t says it
		}
		m.step = Fill
		*m.sub = tiers.Request{Kind: tiers.KindSet, Key: m.key, KeyBinary: m.client.Req.KeyBinary,
			Value: c.Value, ClientFlags: c.ClientFlags, TTL: ttl,
			HasCompareCAS: true, CompareCAS: m.lease, WantCAS: true}
		return Action{Step: Fill, End: AtPrimary}
	case Fill:
		if res.Status != tiers.StatusStored {
			// A write or delete reached the primary after the lease
			// (EXISTS, NOT_FOUND), or the primary failed: the source's
			// value may be older than an acknowledged write.
			return m.miss(FillLost)
		}
		c.Status, c.CAS = tiers.StatusHit, res.CAS
		return m.done(Filled)
	case Release:
		return m.miss(NoEvent)
	}
	panic("handoff: Next with no sub-request in flight")
}

// primary sends the client's write to the primary end.
func (m *Machine) primary() Action {
	m.step, m.primaryDone = Primary, true
	*m.sub = m.client.Req
	return Action{Step: Primary, End: AtPrimary}
}

// writeNext sends the next delete of a write, the primary's turn if it
// has not had it, or answers.
func (m *Machine) writeNext(ev Event) Action {
	if m.next < m.others && (m.primaryDone || m.otherFirst) {
		i := m.next
		m.next++
		m.step = Other
		*m.sub = tiers.Request{Kind: tiers.KindDelete, Key: m.key, KeyBinary: m.client.Req.KeyBinary}
		return Action{Step: Other, End: AtOther, Index: i, Event: ev}
	}
	if !m.primaryDone {
		a := m.primary()
		a.Event = ev
		return a
	}
	if m.failed {
		// Not deleted at every other end: acknowledging the write could let
		// a read there, or a fill from there, serve the value it replaced.
		c := &m.client.Res
		c.Reset()
		c.Status, c.Err = tiers.StatusError, m.failErr
	}
	return m.done(ev)
}

func (m *Machine) read(e End, ev Event) Action {
	m.step = Read
	*m.sub = m.client.Req
	return Action{Step: Read, End: e, Event: ev}
}

// release drops the fill's placeholder, only if it is still ours (C).
func (m *Machine) release(ev Event) Action {
	m.step = Release
	*m.sub = tiers.Request{Kind: tiers.KindDelete, Key: m.key, KeyBinary: m.client.Req.KeyBinary,
		HasCompareCAS: true, CompareCAS: m.lease}
	return Action{Step: Release, End: AtPrimary, Event: ev}
}

func (m *Machine) miss(ev Event) Action {
	m.client.Res.Reset()
	m.client.Res.Status = tiers.StatusMiss
	return m.done(ev)
}

func (m *Machine) done(ev Event) Action {
	m.step = Done
	return Action{Step: Done, Event: ev}
}
