package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/etcdtest"
)

func bounded(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestWatchResumesAfterEtcdRestart: etcd is killed -9 and restarted on its
// data; the client reconnects by itself and the watch continues from the
// revision after the last one it delivered, losing and repeating nothing.
func TestWatchResumesAfterEtcdRestart(t *testing.T) {
	srv := etcdtest.Start(t)
	c := connect(t, srv.Endpoint)
	var want []string
	put := func(v string) {
		t.Helper()
		var err error
		var res store.TxnResult
		// Right after a restart the client may still be redialling.
		for deadline := time.Now().Add(20 * time.Second); ; {
			res, err = c.Txn(bounded(t, 5*time.Second), nil, []store.Op{store.Put("r/k", []byte(v))})
			if err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatalf("put %s: %v", v, err)
		}
		want = append(want, fmt.Sprintf("%s@%d", v, res.Revision))
	}
	put("before")
	w := c.Watch("r/", 0)
	defer w.Close()
	if b, err := w.Next(bounded(t, 20*time.Second)); err != nil || !b.Reset {
		t.Fatalf("first batch %+v, %v", b, err)
	}
	put("1")
	srv.Kill()
	srv.Restart(t)
	put("2")
	put("3")
	var got []string
	for len(got) < 3 {
		b, err := w.Next(bounded(t, 20*time.Second))
		if err != nil {
			t.Fatalf("watch after restart: %v (got %v)", err, got)
		}
		if b.Reset {
			t.Fatalf("reset after a restart without compaction")
		}
		for _, ch := range b.Changes {
			got = append(got, fmt.Sprintf("%s@%d", ch.Row.Value, ch.Row.ModRevision))
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want[1:]) {
		t.Fatalf("watch delivered %v, want %v", got, want[1:])
	}
}

// TestFrozenEtcd: etcd hangs (SIGSTOP). Requests fail when their context
// ends rather than hang; a leader learns it lost its lease from its own
// client's keepalive deadline without the server answering; Close is
// bounded; after SIGCONT the store serves again and the deposed leader's
// writes are fenced.
func TestFrozenEtcd(t *testing.T) {
	srv := etcdtest.Start(t)
	c := connect(t, srv.Endpoint)
	other := connect(t, srv.Endpoint)
	sess, err := c.NewSession(bounded(t, 10*time.Second), 1)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Campaign(bounded(t, 10*time.Second), sess, "loop", "c")
	if err != nil {
		t.Fatal(err)
	}
	// A second candidate waits behind c.
	late := connect(t, srv.Endpoint)
	lateSess, err := late.NewSession(bounded(t, 10*time.Second), 1)
	if err != nil {
		t.Fatal(err)
	}
	lateCtx, stopLate := context.WithCancel(context.Background())
	defer stopLate()
	campaigned := make(chan error, 1)
	go func() {
		_, err := late.Campaign(lateCtx, lateSess, "loop", "late")
		campaigned <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); ; {
		rows, _, err := c.List(bounded(t, 5*time.Second), store.ElectionPrefix("loop"))
		if err == nil && len(rows) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("second candidate not standing: %v %v", rows, err)
		}
	}
	srv.Freeze(t)
	thawed := false
	defer func() {
		if !thawed {
			srv.Thaw(t)
		}
	}()
	_, err = c.Txn(bounded(t, time.Second), nil, []store.Op{store.Put("f/k", nil)})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("put to a frozen etcd: %v, want the context's deadline", err)
	}
	// A campaign whose context ends while etcd hangs returns (withdrawing
	// its candidate row needs etcd, and happens in the background).
	stopLate()
	select {
	case err := <-campaigned:
		if !errors.Is(err, context.Canceled) && !errors.Is(err, store.ErrSessionEnded) {
			t.Fatalf("campaign against a frozen etcd: %v", err)
		}
	case <-time.After(5 * time.Second): // no I/O is left on this path: 5s is ample
		t.Fatalf("a campaign outlived its context on a frozen etcd")
	}
	select {
	case <-l.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("leadership not given up while etcd was frozen past the TTL")
	}
	closed := make(chan error, 1)
	go func() { closed <- other.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Close blocked on a frozen etcd")
	}
	srv.Thaw(t)
	thawed = true
	// The old leadership is fenced once the server has expired the lease:
	// a rival then wins and only its writes pass.
	var ferr error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		_, ferr = store.FencedTxn(bounded(t, 5*time.Second), c, l, nil, []store.Op{store.Put("f/k", []byte("stale"))})
		// Until the server itself expires the lease, no other leader can
		// exist, so a write that still passes the fence is not stale.
		if errors.Is(ferr, store.ErrFenced) {
			break
		}
	}
	if !errors.Is(ferr, store.ErrFenced) {
		t.Fatalf("write of the lapsed leader: %v, want ErrFenced", ferr)
	}
	rival := connect(t, srv.Endpoint)
	rs, err := rival.NewSession(bounded(t, 10*time.Second), 1)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := rival.Campaign(bounded(t, 20*time.Second), rs, "loop", "rival")
	if err != nil {
		t.Fatalf("rival campaign: %v", err)
	}
	if _, err := store.FencedTxn(bounded(t, 5*time.Second), rival, rl, nil, []store.Op{store.Put("f/k", []byte("fresh"))}); err != nil {
		t.Fatalf("rival's write: %v", err)
	}
	if _, err := store.FencedTxn(bounded(t, 5*time.Second), c, l, nil, []store.Op{store.Put("f/k", []byte("stale"))}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("lapsed leader after the rival won: %v, want ErrFenced", err)
	}
}
