package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/pool/goroutine"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/memcached"
)

// poolClosed reads gnet's pool under the guard's lock, which orders the
// read after the guard's last replacement of the pool.
func (g *enrolGuard) poolClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return goroutine.DefaultWorkerPool.IsClosed()
}

// submitEnrolment stands in for gnet's enroll: it submits to gnet's pool a
// task that waits for proceed, then closes the result channel.
func submitEnrolment(t *testing.T, proceed <-chan struct{}) <-chan gnet.RegisteredResult {
	t.Helper()
	ch, err := enrolls.enrol(func() (<-chan gnet.RegisteredResult, error) {
		res := make(chan gnet.RegisteredResult, 1)
		return res, goroutine.DefaultWorkerPool.Submit(func() {
			<-proceed
			close(res)
		})
	})
	if err != nil {
		t.Fatalf("submit on the pool the guard opened: %v", err)
	}
	return ch
}

func waitClosed(t *testing.T, ch <-chan gnet.RegisteredResult) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("a task submitted before the pool was released never ran to its end")
	}
}

// The pool is open for a call, closed once the last call has returned
// and the linger passed, and a task submitted before the release still
// runs to its end; a call after the release gets a working pool again.
func TestEnrolPoolIsClosedBetweenEnrolments(t *testing.T) {
	for round := range 2 {
		proceed := make(chan struct{})
		ch := submitEnrolment(t, proceed)
		poll.Until(t, 10*time.Second, "gnet's pool released after the last enrolment", enrolls.poolClosed)
		close(proceed)
		waitClosed(t, ch)
		if !enrolls.poolClosed() {
			t.Fatalf("round %d: the pool reopened with no enrolment", round)
		}
	}
}

// The pool stays open while a call is in flight, even when the release
// timer fires under it (release is called here as the timer calls it),
// and is released after the last call.
func TestEnrolPoolStaysOpenWhileACallIsInFlight(t *testing.T) {
	inCall := make(chan struct{})
	finish := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := enrolls.enrol(func() (<-chan gnet.RegisteredResult, error) {
			close(inCall)
			<-finish
			return nil, nil
		})
		done <- err
	}()
	<-inCall
	// A second call that starts and ends under the first arms the timer.
	proceed := make(chan struct{})
	close(proceed)
	waitClosed(t, submitEnrolment(t, proceed))
	enrolls.release()
	if enrolls.poolClosed() {
		t.Fatal("pool released while a call was in flight")
	}
	close(finish)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "pool released after the last call", enrolls.poolClosed)
}

// Clients registered and backend connections enrolled after the pool was
// released are served: a client on one loop, a quiet gap until the pool
// is closed, then a client on the other loop, whose backend connection is
// dialled and enrolled only then.
func TestConnectionsEnrolAfterThePoolIsReleased(t *testing.T) {
	srv := newPoolServer(t, Config{Listen: "127.0.0.1:0", Loops: 2},
		memcached.Config{RequestTimeout: time.Second, ProbeInterval: 50 * time.Millisecond})
	startServer(t, srv)

	poll.Until(t, 10*time.Second, "pool released once the server started", enrolls.poolClosed)
	a := mctext.Dial(t, srv.Addr())
	if got := a.Set("k", "v", 0); got != "STORED" {
		t.Fatalf("set: %q", got)
	}
	poll.Until(t, 10*time.Second, "pool released after the first client", enrolls.poolClosed)
	// a stays connected, so the balancer puts b on the other loop.
	b := mctext.Dial(t, srv.Addr())
	for i, c := range []*mctext.Conn{b, a} {
		if v, ok := c.Get("k"); !ok || v != "v" {
			t.Fatalf("client %d: get k = %q, %v", i, v, ok)
		}
	}
	srv.mu.Lock()
	n := len(srv.loops)
	srv.mu.Unlock()
	if n != 2 {
		t.Fatalf("clients opened on %d loops, want the second on a loop of its own", n)
	}
	poll.Until(t, 10*time.Second, "pool released after the second client", enrolls.poolClosed)
}

// newPoolServer builds a server of cfg over a pool (pcfg) of one fresh
// memcached; the pool closes when the test ends.
func newPoolServer(t *testing.T, cfg Config, pcfg memcached.Config) *Server {
	t.Helper()
	m := memcachedtest.Start(t, "-m", "64")
	loops := newLoops(t, cfg.Loops)
	pcfg.Servers = []memcached.Server{{Addr: m.Addr}}
	p, err := memcached.New(pcfg, loops)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	srv, err := New(cfg, p, loops)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// startServer starts srv and stops it when the test ends, failing the
// test if it does not stop within 10 s.
func startServer(t *testing.T, srv *Server) {
	t.Helper()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
}
