package etcdstore_test

import (
	"bytes"
	"context"
	"runtime/pprof"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/poll"
)

// A session's lease is renewed, past its TTL, without the etcd
// client's keepalive loops (they wake every 500 ms for as long as the
// client lives); Close revokes it and ends the renewals.
func TestSessionRenewedOnTheGrid(t *testing.T) {
	_, c, ctx, sess, id := leasedSession(t, 30*time.Second)
	// Alive at every look until twice its TTL has passed: it was renewed.
	aliveFor(ctx, t, c, id, 2)
	select {
	case <-sess.Done():
		t.Fatal("the session ended while renewed")
	default:
	}
	var stacks bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
	for _, loop := range []string{"sendKeepAliveLoop", "deadlineLoop"} {
		if bytes.Contains(stacks.Bytes(), []byte(loop)) {
			t.Errorf("the etcd client's %s runs", loop)
		}
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Client().TimeToLive(ctx, id); err != nil || r.TTL > 0 {
		t.Fatalf("after Close the lease says %+v %v, want revoked", r, err)
	}
	select {
	case <-sess.Done():
	case <-ctx.Done():
		t.Fatal("Done not closed after Close")
	}
}

// The renewals' stream breaks when etcd restarts; the next renewal opens
// a new one, and the session outlives the restart by more than its TTL.
func TestSessionRenewedAcrossARestart(t *testing.T) {
	srv, c, ctx, sess, id := leasedSession(t, 60*time.Second)
	// Renewed before the restart: the stream is open when etcd goes.
	aliveFor(ctx, t, c, id, 1)
	srv.Restart(t)
	back := time.Now()
	poll.Until(t, 40*time.Second, "the session's lease alive past twice its TTL after the restart", func() bool {
		select {
		case <-sess.Done():
			t.Fatalf("the session ended %v after the restart", time.Since(back))
		default:
		}
		r, err := c.Client().TimeToLive(ctx, id)
		if err != nil {
			return false // etcd not answering yet
		}
		if r.TTL <= 0 {
			t.Fatalf("the lease expired %v after the restart", time.Since(back))
		}
		return time.Since(back) > 2*time.Duration(r.GrantedTTL)*time.Second
	})
}

// leasedSession starts an etcd and a store on it, and opens a session of
// a 3 s TTL under a context that ends after timeout (or with the test).
func leasedSession(t *testing.T, timeout time.Duration) (*etcdtest.Server, *etcdstore.Store, context.Context, store.Session, clientv3.LeaseID) {
	t.Helper()
	srv := etcdtest.Start(t)
	c := connect(t, srv.Endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	sess, err := c.NewSession(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, ctx, sess, clientv3.LeaseID(sess.Lease())
}

// aliveFor polls the lease until ttls times its granted TTL has passed
// since the call, failing the test if any look finds it expired.
func aliveFor(ctx context.Context, t *testing.T, c *etcdstore.Store, id clientv3.LeaseID, ttls int) {
	t.Helper()
	start := time.Now()
	poll.Until(t, time.Duration(10*ttls)*time.Second, "the session's lease alive past its TTL", func() bool {
		r, err := c.Client().TimeToLive(ctx, id)
		if err != nil || r.TTL <= 0 {
			t.Fatalf("lease %v after the start: %+v %v", time.Since(start), r, err)
		}
		return time.Since(start) > time.Duration(ttls)*time.Duration(r.GrantedTTL)*time.Second
	})
}
