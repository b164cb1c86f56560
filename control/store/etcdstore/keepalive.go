package etcdstore

import (
	"context"
	"errors"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/strata-cache/strata/internal/tickgrid"
)

// gridLease is the client's Lease with KeepAlive done on the process's
// timer grid, for the sessions NewSession grants.
//
// Why: the client's own KeepAlive starts loops that wake every 500 ms and
// every second for as long as the client lives, off the grid, whatever
// the number of leases: at idle they were most of what the etcd client
// cost a strata. Here each session's lease is renewed by one request on
// a keepalive stream shared by the sessions (renew), at multiples of
// keepPeriod on the grid, where an idle process wakes anyway, and nothing
// runs between renewals.
//
// A lease not granted by NewSession (nobody else asks) falls back to
// the client's own KeepAlive.
type gridLease struct {
	clientv3.Lease // the client's: Grant, Revoke, …
	remote         pb.LeaseClient
	ctx            context.Context // the client's: streams end with it

	mu     sync.Mutex // guards ttls and stream
	ttls   map[clientv3.LeaseID]time.Duration
	stream *keepStream // the open stream, nil: none (yet, or it broke)
}

func newGridLease(c *clientv3.Client) *gridLease {
	return &gridLease{Lease: c.Lease, remote: pb.NewLeaseClient(c.ActiveConnection()), ctx: c.Ctx(),
		ttls: make(map[clientv3.LeaseID]time.Duration)}
}

// granted tells KeepAlive the TTL of a lease NewSession just granted.
func (g *gridLease) granted(id clientv3.LeaseID, ttl time.Duration) {
	g.mu.Lock()
	g.ttls[id] = ttl
	g.mu.Unlock()
}

// KeepAlive keeps id alive until ctx ends or the lease is lost; the
// channel closes then (concurrency.Session's Done follows it).
func (g *gridLease) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	g.mu.Lock()
	ttl, ok := g.ttls[id]
	delete(g.ttls, id)
	g.mu.Unlock()
	if !ok {
		return g.Lease.KeepAlive(ctx, id)
	}
	ch := make(chan *clientv3.LeaseKeepAliveResponse, 1)
	go g.keep(ctx, id, ttl, time.Now().Add(ttl), ch)
	return ch, nil
}

// keep is a session's renewal goroutine, owned by the session: it ends
// when ctx does (the session closed, or the client) or the lease is lost,
// and closes ch then.
func (g *gridLease) keep(ctx context.Context, id clientv3.LeaseID, ttl time.Duration, deadline time.Time, ch chan *clientv3.LeaseKeepAliveResponse) {
	defer close(ch)
	t := time.NewTimer(tickgrid.Until(time.Now(), keepPeriod(ttl)))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sent := time.Now()
		if !sent.Before(deadline) {
			return
		}
		// An answer after the deadline is no use: the lease is gone.
		kctx, cancel := context.WithDeadline(ctx, deadline)
		resp, err := g.renew(kctx, id)
		cancel()
		if ctx.Err() != nil {
			return
		}
		r := keepResult{err: err != nil, gone: errors.Is(err, rpctypes.ErrLeaseNotFound)}
		if err == nil {
			r.ttl = time.Duration(resp.TTL) * time.Second
		}
		var wait time.Duration
		var alive bool
		deadline, wait, alive = afterKeepAlive(sent, time.Now(), deadline, ttl, r)
		if !alive {
			return
		}
		if err == nil {
			select {
			case ch <- &clientv3.LeaseKeepAliveResponse{ResponseHeader: resp.Header, ID: id, TTL: resp.TTL}:
			default: // nobody reads the answers; the channel only ends
			}
		}
		t.Reset(wait)
	}
}

// keepResult is what one renewal said.
type keepResult struct {
	err  bool          // it failed (unreachable, timed out, or gone)
	gone bool          // etcd says the lease does not exist (expired)
	ttl  time.Duration // the lease's TTL as renewed, when it succeeded
}

// keepRetry is how soon a failed renewal is tried again: the grid's idle
// step, so that the retries of a lease in danger ride on wake-ups the
// process has anyway.
const keepRetry = 250 * time.Millisecond

// keepPeriod is the time between renewals of a lease of ttl: a third of
// it, as etcd's client does, rounded down to a multiple of keepRetry so
// that it falls on the grid's idle ticks; keepRetry at least.
func keepPeriod(ttl time.Duration) time.Duration {
	return max(keepRetry, (ttl / 3).Truncate(keepRetry))
}

// afterKeepAlive decides, after a renewal sent at sent and ended at now,
// the lease's deadline (when it expires unless renewed again), the wait
// until the next renewal, and whether the lease is still alive. A renewal
// that succeeded moves the deadline to sent plus the TTL etcd renewed
// (measured from the send, so never later than etcd's own deadline); one
// that failed keeps it and is retried after keepRetry; the lease is lost
// when etcd says it is gone or its deadline passed.
func afterKeepAlive(sent, now, deadline time.Time, ttl time.Duration, r keepResult) (time.Time, time.Duration, bool) {
	switch {
	case r.gone:
		return deadline, 0, false
	case !r.err && r.ttl > 0:
		deadline = sent.Add(r.ttl)
		return deadline, tickgrid.Until(now, keepPeriod(ttl)), now.Before(deadline)
	}
	if !now.Before(deadline) {
		return deadline, 0, false
	}
	return deadline, tickgrid.Until(now, keepRetry), true
}

// renew sends one keepalive of id on the shared stream and waits for its
// answer until ctx ends. A lease etcd no longer has answers TTL 0:
// rpctypes.ErrLeaseNotFound. A stream that cannot be opened or broke
// fails the renewal; the next one opens a new stream.
func (g *gridLease) renew(ctx context.Context, id clientv3.LeaseID) (*pb.LeaseKeepAliveResponse, error) {
	ks, err := g.openStream()
	if err != nil {
		return nil, err
	}
	resp, err := ks.renew(ctx, id)
	if err == nil && resp.TTL <= 0 {
		return nil, rpctypes.ErrLeaseNotFound
	}
	return resp, err
}

// openStream returns the open stream, or opens one. Opening does not wait
// for a connection (fail-fast: a renewal while etcd is unreachable fails
// at once and is retried on the grid, so a lease's deadline is always
// checked), and holds the lock only for that local call.
func (g *gridLease) openStream() (*keepStream, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stream != nil && !g.stream.broken() {
		return g.stream, nil
	}
	sctx, cancel := context.WithCancel(g.ctx)
	s, err := g.remote.LeaseKeepAlive(sctx, grpc.WaitForReady(false))
	if err != nil {
		cancel()
		return nil, err
	}
	ks := &keepStream{s: s, cancel: cancel, done: make(chan struct{}), waiting: make(map[clientv3.LeaseID][]chan *pb.LeaseKeepAliveResponse)}
	go ks.read()
	g.stream = ks
	return ks, nil
}

// keepStream is one LeaseKeepAlive stream: renewals send on it, its
// reader goroutine hands each answer to a renewal waiting for that lease.
// The reader ends when the stream breaks or the client closes.
type keepStream struct {
	s      pb.Lease_LeaseKeepAliveClient
	cancel context.CancelFunc
	done   chan struct{} // closed when the reader ended: the stream is broken

	sendMu sync.Mutex // serialises Send (a gRPC stream allows one sender)

	mu      sync.Mutex // guards waiting
	waiting map[clientv3.LeaseID][]chan *pb.LeaseKeepAliveResponse
}

var errStreamBroken = errors.New("etcdstore: keepalive stream broken")

func (ks *keepStream) broken() bool {
	select {
	case <-ks.done:
		return true
	default:
		return false
	}
}

func (ks *keepStream) read() {
	defer close(ks.done)
	defer ks.cancel()
	for {
		resp, err := ks.s.Recv()
		if err != nil {
			return
		}
		id := clientv3.LeaseID(resp.ID)
		ks.mu.Lock()
		if w := ks.waiting[id]; len(w) > 0 {
			w[0] <- resp // buffered: never blocks
			if ks.waiting[id] = w[1:]; len(ks.waiting[id]) == 0 {
				delete(ks.waiting, id)
			}
		}
		ks.mu.Unlock()
	}
}

func (ks *keepStream) renew(ctx context.Context, id clientv3.LeaseID) (*pb.LeaseKeepAliveResponse, error) {
	ch := make(chan *pb.LeaseKeepAliveResponse, 1)
	ks.mu.Lock()
	ks.waiting[id] = append(ks.waiting[id], ch)
	ks.mu.Unlock()
	ks.sendMu.Lock()
	err := ks.s.Send(&pb.LeaseKeepAliveRequest{ID: int64(id)})
	ks.sendMu.Unlock()
	if err == nil {
		select {
		case resp := <-ch:
			return resp, nil
		case <-ks.done:
			err = errStreamBroken
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	ks.mu.Lock()
	w := ks.waiting[id]
	for i, c := range w {
		if c == ch {
			ks.waiting[id] = append(w[:i:i], w[i+1:]...)
			break
		}
	}
	if len(ks.waiting[id]) == 0 {
		delete(ks.waiting, id)
	}
	ks.mu.Unlock()
	select {
	case resp := <-ch: // answered just as it gave up
		return resp, nil
	default:
	}
	return nil, err
}
