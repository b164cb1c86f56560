package etcdstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/control/store/etcdstore/etcdharness"
	"github.com/strata-cache/strata/internal/etcdtest"
)

// TestListPages: List reads a prefix in pages of ListPage rows and
// returns exactly what one range read at its revision returns, for a
// prefix that fills its last page and one that does not, and nothing of
// a neighbouring prefix.
func TestListPages(t *testing.T) {
	srv := etcdtest.Start(t)
	s := etcdharness.Dial(t, srv.Endpoint, etcdstore.Config{ListPage: 4})
	ctx := context.Background()
	for _, n := range []int{24, 25} {
		p := fmt.Sprintf("pages%d/", n)
		var ops []store.Op
		for i := range n {
			ops = append(ops, store.Put(fmt.Sprintf("%sk%03d", p, i), []byte{byte(i)}))
		}
		ops = append(ops, store.Put(p[:len(p)-1]+"0", nil), store.Put(p[:len(p)-1]+"~", nil))
		if _, err := s.Txn(ctx, nil, ops); err != nil {
			t.Fatal(err)
		}
		rows, rev, err := s.List(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != n {
			t.Fatalf("%s: %d rows, want %d", p, len(rows), n)
		}
		for i, r := range rows {
			if want := fmt.Sprintf("%sk%03d", p, i); r.Key != want || len(r.Value) != 1 || r.Value[0] != byte(i) {
				t.Fatalf("%s: row %d is %q=%v, want %q", p, i, r.Key, r.Value, want)
			}
		}
		if _, cur, err := s.Get(ctx, "any"); err != nil || rev != cur {
			t.Fatalf("%s: revision %d, the store is at %d (%v)", p, rev, cur, err)
		}
	}
}

// TestListIsOneSnapshot: rows written while List pages through a prefix
// one row at a time, with compactions racing it, never show: List returns
// exactly the rows a single read at its revision returns.
func TestListIsOneSnapshot(t *testing.T) {
	srv := etcdtest.Start(t)
	s := etcdharness.Dial(t, srv.Endpoint, etcdstore.Config{ListPage: 1})
	ctx := context.Background()
	for i := range 60 {
		if _, err := store.PutRow(ctx, s, fmt.Sprintf("snap/k%03d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			rev, err := store.PutRow(ctx, s, fmt.Sprintf("snap/n%02d", i%30), []byte("w"))
			if err == nil && i%400 == 399 {
				_, _ = s.Client().Compact(ctx, rev)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for round := 0; round < 20 && time.Now().Before(deadline); round++ {
		rows, rev, err := s.List(ctx, "snap/")
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, r := range rows {
			if r.ModRevision > rev {
				t.Fatalf("round %d: row %s written at %d, after the list's revision %d", round, r.Key, r.ModRevision, rev)
			}
		}
		one, err := s.Client().Get(ctx, "strata/snap/", clientv3.WithPrefix(), clientv3.WithRev(rev), clientv3.WithCountOnly())
		if err != nil {
			continue // compacted meanwhile: nothing to compare with
		}
		if int64(len(rows)) != one.Count {
			t.Fatalf("round %d: %d rows at revision %d, one read there has %d", round, len(rows), rev, one.Count)
		}
	}
}
