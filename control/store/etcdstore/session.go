package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/strata-cache/strata/control/store"
)

// session wraps a concurrency.Session: its lease is renewed on the
// process's timer grid (gridLease) until the session or the client
// closes, or the lease is found expired.
type session struct {
	s *concurrency.Session
}

func (s *session) Lease() store.LeaseID       { return store.LeaseID(s.s.Lease()) }
func (s *session) Done() <-chan struct{}      { return s.s.Done() }
func (s *session) Close() error               { _ = s.s.Close(); return nil }
func (s *session) etcd() *concurrency.Session { return s.s }

// NewSession implements store.Sessions. The grant is bounded by ctx; the
// renewals then live as long as the session and the client.
func (s *Store) NewSession(ctx context.Context, ttlSeconds int) (store.Session, error) {
	if ttlSeconds <= 0 {
		return nil, fmt.Errorf("etcdstore: session ttl %ds: must be positive", ttlSeconds)
	}
	g, err := s.c.Grant(ctx, int64(ttlSeconds))
	if err != nil {
		return nil, s.wrap(err)
	}
	s.lease.granted(g.ID, time.Duration(g.TTL)*time.Second)
	cs, err := concurrency.NewSession(s.sc, concurrency.WithTTL(ttlSeconds), concurrency.WithLease(g.ID))
	if err != nil {
		return nil, s.wrap(err)
	}
	return &session{s: cs}, nil
}

// GrantLease implements store.Leases with a plain etcd grant, never kept
// alive.
func (s *Store) GrantLease(ctx context.Context, ttlSeconds int) (store.LeaseID, error) {
	if ttlSeconds <= 0 {
		return 0, fmt.Errorf("etcdstore: lease ttl %ds: must be positive", ttlSeconds)
	}
	g, err := s.c.Grant(ctx, int64(ttlSeconds))
	if err != nil {
		return 0, s.wrap(err)
	}
	return store.LeaseID(g.ID), nil
}

// Campaign implements store.Elections with etcd's concurrency election.
// The campaign ends early when the session does, and returns when ctx
// ends even if etcd does not answer. After winning it checks that the
// candidate row is still there (concurrency's campaign can return after
// its own lease expired while it waited). A win that cannot be handed to
// the caller is resigned, so no leader stands that nobody knows of. The
// goroutines that withdraw or resign in the background end when etcd
// answers or the client closes.
func (s *Store) Campaign(ctx context.Context, sess store.Session, name, value string) (store.Leadership, error) {
	es, ok := sess.(*session)
	if !ok || es.s.Client() != s.sc {
		return nil, errors.New("etcdstore: campaign with a session of another client")
	}
	pfx := strings.TrimSuffix(s.key(store.ElectionPrefix(name)), "/")
	e := concurrency.NewElection(es.etcd(), pfx)

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // owned by this call: ends when it returns (cancel) or the session does
		select {
		case <-sess.Done():
			cancel()
		case <-cctx.Done():
		}
	}()
	// A cancelled concurrency campaign withdraws its candidate row with the
	// client's context, so it would block until etcd answers. Waiting for
	// it here would hang a caller whose context ended during an outage; the
	// goroutine finishes the withdrawal in the background and ends when etcd
	// answers or the client closes.
	won := make(chan error, 1)
	var mu sync.Mutex // guards abandoned and the hand-over on won
	abandoned := false
	go func() {
		err := e.Campaign(cctx, value)
		mu.Lock()
		gone := abandoned
		if !gone {
			won <- err
		}
		mu.Unlock()
		if gone && err == nil { // won just as the caller gave up: hand it back
			_ = e.Resign(s.c.Ctx())
		}
	}()
	var err error
	select {
	case err = <-won:
	case <-cctx.Done():
		mu.Lock()
		select {
		case err = <-won: // the outcome arrived first: keep it
		default:
			abandoned, err = true, cctx.Err()
		}
		mu.Unlock()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cctx.Err() != nil {
			return nil, store.ErrSessionEnded
		}
		return nil, s.wrap(err)
	}
	key := strings.TrimPrefix(e.Key(), s.prefix)
	row, _, err := s.Get(ctx, key)
	if err != nil || row.CreateRevision != e.Rev() {
		// Won but cannot hand the win over: give it back, in the
		// background for the same reason as above, so that no leader
		// stands that nobody knows of.
		go func() { _ = e.Resign(s.c.Ctx()) }()
		if err == nil {
			err = store.ErrSessionEnded
		}
		return nil, err
	}
	return newLeadership(e, sess, key), nil
}

// leadership is a won concurrency election.
type leadership struct {
	e    *concurrency.Election
	key  string
	rev  int64
	lost <-chan struct{}

	mu       sync.Mutex // guards closing resigned
	resigned chan struct{}
}

func newLeadership(e *concurrency.Election, sess store.Session, key string) *leadership {
	l := &leadership{e: e, key: key, rev: e.Rev(), resigned: make(chan struct{})}
	l.lost = store.LostWhen(sess, l.resigned)
	return l
}

func (l *leadership) Key() string           { return l.key }
func (l *leadership) Fence() store.Cond     { return store.IfCreateRevision(l.key, l.rev) }
func (l *leadership) Done() <-chan struct{} { return l.lost }

func (l *leadership) Resign(ctx context.Context) error {
	l.mu.Lock()
	select {
	case <-l.resigned:
	default:
		close(l.resigned)
	}
	l.mu.Unlock()
	return l.e.Resign(ctx)
}
