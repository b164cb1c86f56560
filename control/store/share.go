package store

import (
	"context"
	"sync"
)

// Shared lends one Store to several owners. Each owner closes what it was
// lent as if it were its own client; the store itself closes when the
// last loan and the lender's own hold are released, in any order.
//
// Why: a process with several planes on one etcd (shard assignment,
// locality, hot-key marks) opened a client for each, and every client
// keeps its own lease keepalive loops, timers and gRPC pings; at idle
// those were most of a strata's wake-ups.
//
// Sessions are shared too: every owner's NewSession of one TTL lends the
// same session, so a process keeps one lease alive, not one per plane
// (each lease is a keepalive every TTL/3). Consequences, which every
// plane's loop already handles (it campaigns or registers again on a new
// session when Done closes):
//   - the lease is the process's: when it expires, every plane's rows on
//     it go at once, and every loan's Done closes together;
//   - a loan's Close revokes nothing while another owner holds the lease:
//     rows an owner put on it stay until the last loan of that lease is
//     closed (then it is revoked, as a session's Close does) or the lease
//     expires. Owners delete what must go sooner (a leadership resigns);
//   - one lease is one candidate: owners of one Shared must not campaign
//     in the same election.
//
// Elections stay per owner: a loan's Campaign runs on the shared session.
type Shared struct {
	st Store

	mu       sync.Mutex           // guards holds, released and leases
	holds    int                  // loans not closed, plus the lender's until Release
	released bool                 // the lender's hold was given up
	leases   map[int]*sharedLease // the session lent for each TTL (seconds)
}

// sharedLease is the session lent to every owner that asks for its TTL.
// Invariant: sess is nil only while granted is open (a grant in flight).
type sharedLease struct {
	ttl     int
	sess    Session
	granted chan struct{} // closed when the grant ended, won or failed
	loans   int           // session loans not closed; the last closes sess
}

// ended reports whether the lease is gone (its session's Done closed).
func (sl *sharedLease) ended() bool {
	select {
	case <-sl.sess.Done():
		return true
	default:
		return false
	}
}

// Share returns st shared, held by the caller until Release.
func Share(st Store) *Shared {
	return &Shared{st: st, holds: 1, leases: make(map[int]*sharedLease)}
}

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

// session lends the session of ttl, granting one when there is none or
// the last one ended. One owner grants (outside the lock); the others of
// the same TTL wait for its outcome.
func (s *Shared) session(ctx context.Context, ttl int) (Session, error) {
	for {
		s.mu.Lock()
		sl := s.leases[ttl]
		if sl != nil && sl.sess == nil { // a grant in flight
			s.mu.Unlock()
			select {
			case <-sl.granted:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if sl != nil && !sl.ended() {
			sl.loans++
			s.mu.Unlock()
			return &sessionLoan{sl: sl, s: s}, nil
		}
		sl = &sharedLease{ttl: ttl, granted: make(chan struct{})}
		s.leases[ttl] = sl // an ended one closes with its last loan
		s.mu.Unlock()

		sess, err := s.st.NewSession(ctx, ttl)
		s.mu.Lock()
		close(sl.granted)
		if err != nil {
			delete(s.leases, ttl)
			s.mu.Unlock()
			return nil, err
		}
		sl.sess, sl.loans = sess, 1
		s.mu.Unlock()
		return &sessionLoan{sl: sl, s: s}, nil
	}
}

// giveBack ends one loan of sl; the last one closes (revokes) its
// session.
func (s *Shared) giveBack(sl *sharedLease) error {
	s.mu.Lock()
	sl.loans--
	last := sl.loans == 0
	if last && s.leases[sl.ttl] == sl {
		delete(s.leases, sl.ttl)
	}
	s.mu.Unlock()
	if last {
		return sl.sess.Close()
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

// NewSession lends the process's session of ttlSeconds (see Shared).
func (l *loan) NewSession(ctx context.Context, ttlSeconds int) (Session, error) {
	return l.s.session(ctx, ttlSeconds)
}

// Campaign runs on the shared session a loan stands for.
func (l *loan) Campaign(ctx context.Context, sess Session, name, value string) (Leadership, error) {
	if sl, ok := sess.(*sessionLoan); ok {
		sess = sl.sl.sess
	}
	return l.Store.Campaign(ctx, sess, name, value)
}

// sessionLoan is one owner's loan of a shared session. Done is the
// shared lease's: it closes when the lease is gone, for every loan at
// once, and not when this loan is closed.
type sessionLoan struct {
	sl   *sharedLease
	s    *Shared
	once sync.Once
}

func (l *sessionLoan) Lease() LeaseID        { return l.sl.sess.Lease() }
func (l *sessionLoan) Done() <-chan struct{} { return l.sl.sess.Done() }

// Close ends this loan; the last loan of the lease revokes it.
// Idempotent.
func (l *sessionLoan) Close() error {
	var err error
	l.once.Do(func() { err = l.s.giveBack(l.sl) })
	return err
}
