package store

import "sync"

// Shared lends one Store to several owners. Each owner closes what it was
// lent as if it were its own client; the store itself closes when the
// last loan and the lender's own hold are released, in any order.
//
// Why: a process with several planes on one etcd (shard assignment,
// locality, hot-key marks) opened a client for each, and every client
// keeps its own lease keepalive loops, timers and gRPC pings; at idle
// those were most of a strata's wake-ups. Leases, sessions, watches and
// elections of different owners on one client stay independent: each
// owner's session is its own lease.
type Shared struct {
	st Store

	mu       sync.Mutex // guards holds and released
	holds    int        // loans not closed, plus the lender's until Release
	released bool       // the lender's hold was given up
}

// Share returns st shared, held by the caller until Release.
func Share(st Store) *Shared { return &Shared{st: st, holds: 1} }

// Lend returns a view of the store whose Close releases this loan only.
// It fails with ErrClosed once every hold was released (the store is
// closed then).
func (s *Shared) Lend() (Store, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds == 0 {
		return nil, ErrClosed
	}
	s.holds++
	return &loan{Store: s.st, s: s}, nil
}

// Release gives up the lender's hold; the store closes now if no loan is
// open. Idempotent.
func (s *Shared) Release() error {
	s.mu.Lock()
	if s.released {
		s.mu.Unlock()
		return nil
	}
	s.released = true
	s.mu.Unlock()
	return s.release()
}

func (s *Shared) release() error {
	s.mu.Lock()
	s.holds--
	last := s.holds == 0
	s.mu.Unlock()
	if last {
		return s.st.Close()
	}
	return nil
}

// loan is one owner's view of a Shared store.
type loan struct {
	Store
	s    *Shared
	once sync.Once
}

// Close releases this loan; the last one closes the store. Idempotent.
func (l *loan) Close() error {
	var err error
	l.once.Do(func() { err = l.s.release() })
	return err
}
