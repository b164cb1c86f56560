package tlsconn

import "sync/atomic"

// Sides of a handshake, the side label of strata_tls_handshakes_total and
// strata_tls_handshake_errors_total.
const (
	SideClient  = "client"  // the memcached listener's clients
	SideLink    = "link"    // region links, accepted and dialled
	SideBackend = "backend" // memcached servers a pool dials
)

// Counts tallies handshakes and their failures by reason. The zero value
// is ready; its methods are safe from any goroutine.
type Counts struct {
	handshakes atomic.Uint64
	errs       [6]atomic.Uint64 // by index in Reasons
}

// Count records one handshake's outcome, err nil for a success; server
// tells which side this end played (Reason).
func (c *Counts) Count(err error, server bool) {
	c.handshakes.Add(1)
	if err == nil {
		return
	}
	r := Reason(err, server)
	for i, name := range Reasons {
		if name == r {
			c.errs[i].Add(1)
		}
	}
}

// Tally is a reading of Counts.
type Tally struct {
	Handshakes uint64            // attempted
	Errors     map[string]uint64 // failed, by reason (every reason present)
}

// Read reads the counts.
func (c *Counts) Read() Tally {
	t := Tally{Handshakes: c.handshakes.Load(), Errors: make(map[string]uint64, len(Reasons))}
	for i, r := range Reasons {
		t.Errors[r] = c.errs[i].Load()
	}
	return t
}

// Plus is t and u added, for one side counted in several places.
func (t Tally) Plus(u Tally) Tally {
	s := Tally{Handshakes: t.Handshakes + u.Handshakes, Errors: make(map[string]uint64, len(Reasons))}
	for _, r := range Reasons {
		s.Errors[r] = t.Errors[r] + u.Errors[r]
	}
	return s
}
