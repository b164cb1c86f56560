package assign

import "time"

// Detector declares servers dead on two kinds of evidence: the leader's
// own probe (failing without interruption for at least After) and the
// agents' reports (at least half of the live agents cannot reach the
// server, or there is no live agent to ask). Requiring both keeps a
// leader with a bad link from failing over a healthy server on its own,
// and keeps one proxy with a bad link from doing it either.
//
// It holds the start of each server's current failure streak; it is not
// safe for concurrent use (the loop's goroutine owns it).
type Detector struct {
	// After is how long the own probe must fail before the server may be
	// declared dead. With probes every P, detection takes at most
	// After + P plus one leader round.
	After time.Duration

	failingSince map[string]time.Time
}

// Evidence is what the loop knows of one server at one round.
type Evidence struct {
	Addr string
	// ProbeOK is the outcome of the leader's own probe this round.
	ProbeOK bool
	// Reporters is how many live agents report the server unreachable;
	// Agents is how many agents are live.
	Reporters, Agents int
}

// Verdict is the Detector's decision on one server.
type Verdict uint8

const (
	// Alive: the own probe answered.
	Alive Verdict = iota
	// Suspect: failing, but not for long enough or without the agents'
	// agreement.
	Suspect
	// Dead: fail it over.
	Dead
)

// Observe records one round of evidence at now and returns a verdict per
// server, in the order of ev. A server absent from ev is forgotten.
func (d *Detector) Observe(now time.Time, ev []Evidence) []Verdict {
	if d.failingSince == nil {
		d.failingSince = map[string]time.Time{}
	}
	seen := make(map[string]bool, len(ev))
	out := make([]Verdict, len(ev))
	for i, e := range ev {
		seen[e.Addr] = true
		if e.ProbeOK {
			delete(d.failingSince, e.Addr)
			out[i] = Alive
			continue
		}
		since, ok := d.failingSince[e.Addr]
		if !ok {
			since = now
			d.failingSince[e.Addr] = now
		}
		agree := e.Agents == 0 || 2*e.Reporters >= e.Agents
		if now.Sub(since) >= d.After && agree {
			out[i] = Dead
		} else {
			out[i] = Suspect
		}
	}
	for a := range d.failingSince {
		if !seen[a] {
			delete(d.failingSince, a)
		}
	}
	return out
}
