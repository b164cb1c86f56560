package locsvc

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// watchLoop follows the rows prefix: it learns the store's revision first
// (nothing is cached anywhere before, so that revision is applied by
// definition and acknowledged at once; the service is ready once that ack
// is written), then feeds every batch to the
// shared cache, the flights waiting for a row, and u.
func (s *Service) watchLoop(u Updater, acks *acker) {
	prefix := s.table.RowsPrefix()
	var next int64
	for s.ctx.Err() == nil {
		if next == 0 {
			ctx, cancel := context.WithTimeout(s.ctx, s.cfg.ReadTimeout)
			_, rev, err := s.st.Get(ctx, prefix)
			cancel()
			if err != nil {
				s.pause(s.cfg.ReadTimeout)
				continue
			}
			acks.expect(rev, 0)
			// Ready only once the ack row exists: the placement service
			// waits for the members it sees, so a strata must be seen
			// before anything it resolves can be cached on its loops.
			select {
			case <-acks.first:
			case <-s.ctx.Done():
				return
			}
			s.mu.Lock()
			s.ready = true
			s.mu.Unlock()
			next = rev + 1
		}
		w := s.st.Watch(prefix, next)
		for {
			b, err := w.Next(s.ctx)
			if err != nil {
				if s.ctx.Err() == nil {
					s.cfg.Logger.Warn("location watch", "err", err)
				}
				break
			}
			s.apply(b, u, acks)
			next = b.Revision + 1
		}
		w.Close()
		s.pause(s.cfg.ReadTimeout)
	}
}

// apply takes one watch batch into the shared cache and the flights, and
// queues it for the updater behind every answer already queued.
func (s *Service) apply(b store.Batch, u Updater, acks *acker) {
	changes := make([]loccache.Change, 0, len(b.Changes))
	seen := make(map[string]bool, len(b.Changes))
	for _, c := range b.Changes {
		name, ok := s.table.Name(c.Row.Key)
		if !ok {
			continue // not a row, or a marker: it counts only for its revision
		}
		seen[name] = true
		if c.Deleted {
			changes = append(changes, loccache.Change{Name: name, Deleted: true})
			continue
		}
		e, err := loctable.Decode(c.Row.Value)
		if err != nil {
			s.cfg.Logger.Error("location row", "key", c.Row.Key, "err", err)
			continue
		}
		changes = append(changes, loccache.Change{Name: name, Loc: e.Location()})
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if b.Reset { // rows gone while the watch was behind: forget them too
		for name := range s.cache {
			if !seen[name] {
				changes = append(changes, loccache.Change{Name: name, Deleted: true})
			}
		}
	}
	for _, c := range changes {
		if c.Deleted {
			delete(s.cache, c.Name)
			continue
		}
		if _, ok := s.cache[c.Name]; ok {
			s.cachePutLocked(c.Name, c.Loc)
		}
		if f := s.flights[c.Name]; f != nil {
			if !f.seenOK || f.seen.Before(c.Loc) {
				f.seen, f.seenOK = c.Loc, true
			}
			select {
			case f.appeared <- struct{}{}:
			default:
			}
		}
	}
	s.down = false // the store answers
	if u == nil || len(changes) == 0 {
		acks.expect(b.Revision, 0)
		return
	}
	n := (len(changes) + s.cfg.UpdateBatch - 1) / s.cfg.UpdateBatch
	dones := acks.expect(b.Revision, n)
	for _, done := range dones {
		chunk := changes[:min(len(changes), s.cfg.UpdateBatch)]
		changes = changes[len(chunk):]
		s.out.push(func() { u.Update(chunk, done) })
	}
}

func (s *Service) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
	case <-t.C:
	}
}

// acker acknowledges, in acks/<member>, the highest rows revision all of
// whose batches every loop applied, on the member's session lease (the
// placement service counts a member live while the row exists).
type acker struct {
	s *Service

	mu      sync.Mutex // guards pending and acked
	pending []pendingAck
	acked   int64 // -1 until the watch's start revision is known
	kick    chan struct{}
	// first is closed once an ack row was written.
	first     chan struct{}
	firstOnce sync.Once

	// With FenceAfter (guarded by mu): joinRev is the revision of this
	// session's join (0: not joined), lastAlive the start of the last
	// store operation that proved the session's lease alive.
	joinRev   int64
	lastAlive time.Time
}

// pendingAck is a batch at rev whose left Update calls are not done yet.
type pendingAck struct {
	rev  int64
	left int
}

func newAcker(s *Service) *acker {
	return &acker{s: s, acked: -1, kick: make(chan struct{}, 1), first: make(chan struct{})}
}

// expect registers the batch at rev, delivered in n Update calls, and
// returns their n done funcs. Each counts once however often it is
// called, so a router that calls one twice cannot acknowledge early.
// Batches are acknowledged in registration order.
func (a *acker) expect(rev int64, n int) []func() {
	a.mu.Lock()
	a.pending = append(a.pending, pendingAck{rev: rev, left: n})
	a.advanceLocked()
	a.mu.Unlock()
	dones := make([]func(), n)
	for i := range dones {
		var once sync.Once
		dones[i] = func() { once.Do(func() { a.done(rev) }) }
	}
	return dones
}

func (a *acker) done(rev int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := range a.pending {
		if a.pending[i].rev == rev {
			a.pending[i].left--
			break
		}
	}
	a.advanceLocked()
}

func (a *acker) advanceLocked() {
	i := 0
	for ; i < len(a.pending) && a.pending[i].left == 0; i++ {
		a.acked = max(a.acked, a.pending[i].rev)
	}
	if i == 0 {
		return
	}
	a.pending = append(a.pending[:0], a.pending[i:]...)
	a.s.applied.Store(a.acked)
	a.refreshLocked()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// refreshLocked sets when Fenced starts to say yes. Serving needs both:
// the rows up to the join applied on every loop (so nothing that moved
// while this strata was away is still routed by an older view), and a
// recent proof of membership. A member whose lease ended is waited for
// FenceAfter after the end, which comes after lastAlive: this strata
// stops serving before the placement service stops waiting for it.
func (a *acker) refreshLocked() {
	if a.s.cfg.FenceAfter <= 0 {
		return
	}
	if a.joinRev == 0 || a.acked < a.joinRev || a.lastAlive.IsZero() {
		a.s.servingUntil.Store(0)
		return
	}
	a.s.servingUntil.Store(a.lastAlive.Add(a.s.cfg.FenceAfter).UnixNano())
}

// alive records that the lease was alive at some time after t; join > 0
// is this session's join, at that revision (its marker's).
func (a *acker) alive(t time.Time, join int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if join > 0 {
		a.joinRev = join
	}
	if t.After(a.lastAlive) {
		a.lastAlive = t
	}
	a.refreshLocked()
}

func (a *acker) lastAliveAt() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastAlive
}

func (a *acker) load() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acked
}

// run keeps a session and writes the acknowledged revision on it whenever
// it grows (and again on a new session). With FenceAfter, the first write
// of a session also writes its join marker (in the rows prefix, so the
// watch delivers it in order with the rows), and while nothing is written
// a read of the ack row every FenceAfter/4 proves the lease still alive.
func (a *acker) run(ctx context.Context) {
	s := a.s
	fence := s.cfg.FenceAfter
	heartbeat := fence / 4
	wait := s.cfg.ReadTimeout
	if fence > 0 {
		wait = min(wait, heartbeat)
	}
	for ctx.Err() == nil {
		sess, err := s.st.NewSession(ctx, s.cfg.SessionTTL)
		if err != nil {
			s.pause(s.cfg.ReadTimeout)
			continue
		}
		s.counters.setSession(sess.Lease())
		var written int64 = -1
		joined := false
		for alive := true; alive; {
			wrote, failed := false, false
			if rev := a.load(); rev > written {
				ops := []store.Op{store.PutLease(s.layout.AckKey(s.cfg.Member), []byte(strconv.FormatInt(rev, 10)), sess.Lease())}
				if fence > 0 && !joined {
					ops = append(ops, store.PutLease(s.layout.JoinKey(s.cfg.Member), nil, sess.Lease()))
				}
				t0 := s.cfg.Now()
				wctx, cancel := context.WithTimeout(ctx, s.cfg.ReadTimeout)
				res, err := s.st.Txn(wctx, nil, ops)
				cancel()
				wrote, failed = true, err != nil
				if err == nil {
					written = rev
					var join int64
					if fence > 0 && !joined {
						joined, join = true, res.Revision
					}
					a.alive(t0, join)
					a.firstOnce.Do(func() { close(a.first) })
				} else if ctx.Err() == nil {
					s.cfg.Logger.Warn("location ack", "rev", rev, "err", err)
				}
			} else if joined && s.cfg.Now().Sub(a.lastAliveAt()) >= heartbeat {
				alive = a.heartbeat(ctx, sess, min(s.cfg.ReadTimeout, heartbeat))
			}
			if wrote {
				// At most one ack per AckInterval: while rows change fast
				// (a cold start creates many), every member would
				// otherwise write one per revision.
				spacing := time.NewTimer(s.cfg.AckInterval)
				select {
				case <-ctx.Done():
					alive = false
				case <-sess.Done():
					alive = false
				case <-spacing.C:
				}
				spacing.Stop()
			}
			var retry *time.Timer
			var retryC <-chan time.Time
			if d := ackWait(failed, joined, s.cfg.Now().Sub(a.lastAliveAt()), heartbeat, wait); d > 0 {
				retry = time.NewTimer(d)
				retryC = retry.C
			}
			select {
			case <-ctx.Done():
				alive = false
			case <-sess.Done():
				alive = false
			case <-a.kick:
			case <-retryC: // a failed write is tried again, a heartbeat falls due
			}
			if retry != nil {
				retry.Stop()
			}
		}
		// The join stays until the next session's: this strata keeps
		// serving its view until lastAlive + FenceAfter, through a store
		// outage as long as that.
		s.counters.setSession(0)
		_ = sess.Close()
	}
}

// ackWait is how long the acker sleeps after a step unless kicked (0:
// until kicked). A failed write is tried again after retry. Joined (with
// FenceAfter), the next heartbeat falls due heartbeat after the last
// proof of membership, sinceAlive ago; one already due (the last read
// proved nothing) is tried again after retry. Otherwise nothing is due:
// an idle member's acker does not wake.
func ackWait(failed, joined bool, sinceAlive, heartbeat, retry time.Duration) time.Duration {
	d := time.Duration(0)
	if failed {
		d = retry
	}
	if joined {
		next := heartbeat - sinceAlive
		if next <= 0 {
			next = retry
		}
		if d == 0 || next < d {
			d = next
		}
	}
	return d
}

// heartbeat reads the ack row: there, on this session's lease, it proves
// the lease alive; gone, the lease ended (false: join again on a new
// session); a failed read proves nothing.
func (a *acker) heartbeat(ctx context.Context, sess store.Session, timeout time.Duration) bool {
	s := a.s
	t0 := s.cfg.Now()
	hctx, cancel := context.WithTimeout(ctx, timeout)
	row, _, err := s.st.Get(hctx, s.layout.AckKey(s.cfg.Member))
	cancel()
	switch {
	case err != nil:
		return true
	case !row.Exists() || row.Lease != sess.Lease():
		s.cfg.Logger.Warn("location membership lost: joining again", "member", s.cfg.Member)
		return false
	}
	a.alive(t0, 0)
	return true
}
