package hotmarks_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/hotmarks"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

var _ hotmarks.Backend = (*etcdstore.Store)(nil)

// etcdHold is etcdtest's smallest lease TTL doubled, so that a write
// every etcdInterval keeps a row alive with a wide margin.
const (
	etcdHold     = 2 * time.Second
	etcdInterval = 50 * time.Millisecond
)

// etcdStrata is one strata of the fleet: its own etcd client and Shared.
func etcdStrata(t *testing.T, endpoint string) *hotmarks.Shared {
	t.Helper()
	c, err := etcdstore.New(etcdstore.Config{Endpoints: []string{endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	s, err := hotmarks.New(c, hotmarks.Config{Hold: etcdHold, Interval: etcdInterval, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.Start()
	return s
}

func wallMark(key string) hotkeys.Mark {
	now := time.Now().UnixNano()
	return hotkeys.Mark{Key: key, Kind: hotkeys.KindCounter, K: 8, Since: now, Seen: now}
}

func keys(ms []hotkeys.Mark) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Key
	}
	return fmt.Sprint(out)
}

// waitKeys polls until every strata's marks have exactly these keys.
func waitKeys(t *testing.T, want string, ss ...*hotmarks.Shared) {
	t.Helper()
	for i, s := range ss {
		poll.Until(t, wait, fmt.Sprintf("strata %d to mark %s", i, want), func() bool { return keys(s.Marks(0)) == want })
	}
}

// reporter publishes a fresh mark of key from s every etcdInterval, as a
// detector that keeps finding the key hot does, until stopped. The test
// owns its goroutine; stop ends it and returns when the last report was
// made.
func reporter(t *testing.T, s *hotmarks.Shared, key string) (stop func() time.Time) {
	done, ended := make(chan struct{}), make(chan time.Time, 1)
	go func() {
		tick := time.NewTicker(etcdInterval)
		defer tick.Stop()
		var last time.Time
		for {
			last = time.Now()
			s.Publish([]hotkeys.Mark{wallMark(key)})
			select {
			case <-done:
				ended <- last
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	var last time.Time
	stop = func() time.Time {
		once.Do(func() { close(done); last = <-ended })
		return last
	}
	t.Cleanup(func() { stop() })
	return stop
}

// Two stratas on one etcd: a mark published by one is seen by the other;
// it stays while either reports it and goes no sooner than the hold after
// the last report.
func TestEtcdSharedMarks(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := etcdStrata(t, srv.Endpoint), etcdStrata(t, srv.Endpoint)

	published := time.Now()
	a.Publish([]hotkeys.Mark{wallMark("votes:1")})
	waitKeys(t, "[votes:1]", b, a)
	seen := time.Since(published)
	waitKeys(t, "[]", a, b)
	gone := time.Since(published)
	if gone < etcdHold {
		t.Fatalf("mark gone %v after it was published, before the hold %v", gone, etcdHold)
	}
	t.Logf("published to seen by both: %v (write interval %v); published to gone: %v (hold %v)", seen, etcdInterval, gone, etcdHold)

	stopB := reporter(t, b, "feed:7")
	waitKeys(t, "[feed:7]", a)
	// Reported for twice the hold: every write renews it.
	// The ticker paces the checks; nothing is waited for.
	pace := time.NewTicker(etcdInterval)
	defer pace.Stop()
	for renewed := time.Now().Add(2 * etcdHold); time.Now().Before(renewed); <-pace.C {
		if got := keys(a.Marks(0)); got != "[feed:7]" {
			t.Fatalf("a reported mark lapsed: %s", got)
		}
	}
	last := stopB()
	waitKeys(t, "[]", a, b)
	gone = time.Since(last)
	if gone < etcdHold {
		t.Fatalf("mark gone %v after the last report, before the hold %v", gone, etcdHold)
	}
	t.Logf("last report to gone: %v (hold %v)", gone, etcdHold)
	if st := b.Stats(); st.WriteErrors != 0 || st.Writes == 0 {
		t.Fatalf("b stats %+v", st)
	}
}

// etcd is killed -9: both stratas keep serving the marks they had, and a
// report made meanwhile waits; etcd restarts on its data and the stratas
// converge on what it holds: the new report, and not the mark nobody
// renewed.
func TestEtcdKilledAndRestarted(t *testing.T) {
	srv := etcdtest.Start(t)
	a, b := etcdStrata(t, srv.Endpoint), etcdStrata(t, srv.Endpoint)
	stopOld := reporter(t, a, "old")
	waitKeys(t, "[old]", a, b)
	stopOld()

	srv.Kill()
	stopNew := reporter(t, a, "new")
	defer stopNew()
	poll.Until(t, wait, "a write to fail while etcd is down", func() bool { return a.Stats().WriteErrors > 0 })
	for i, s := range []*hotmarks.Shared{a, b} {
		if got := keys(s.Marks(0)); got != "[old]" {
			t.Fatalf("strata %d marks %s while etcd is down, want its last copy [old]", i, got)
		}
	}

	srv.Restart(t)
	restarted := time.Now()
	waitKeys(t, "[new]", a, b)
	t.Logf("restart to converged: %v (hold %v)", time.Since(restarted), etcdHold)

	raw, err := etcdstore.New(etcdstore.Config{Endpoints: []string{srv.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	rows, _, err := raw.List(ctx, hotmarks.RowPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Key != hotmarks.RowPrefix+"new" || rows[0].Lease == store.LeaseID(0) {
		t.Fatalf("rows in etcd %+v, want the new mark under a lease", rows)
	}
}
