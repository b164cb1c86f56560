package memcached_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/memcached"
)

// The tests of writes to L1 that fail while the server is still up: an
// invalidation that times out before the failure threshold is reached,
// and one refused at once because the connection is full. Either leaves
// the old copy in L1 (the delete may run late, or never), so the server
// must leave service at once and come back only through the returning
// protocol.

// promoteK stores k=v through strata and reads it until L1 holds it.
func promoteK(t *testing.T, s *strata, c *rawClient, v string) {
	t.Helper()
	if l, err := c.set("k", v); err != nil || l != "STORED" {
		t.Fatalf("set k=%s: %q %v", v, l, err)
	}
	poll.Until(t, 30*time.Second, "k promoted into L1", func() bool {
		if vals, err := c.get("k"); err != nil || vals["k"] != v {
			t.Fatalf("get k: %v %v, want %s", vals, err, v)
		}
		return presentDirect(t, s.l1mc.Addr, []string{"k"})["k"] == v
	})
}

// readsV2UntilServed reads k until the L1 server is up again and serves
// the new value, then after more times, failing on any other answer.
func readsV2UntilServed(t *testing.T, s *strata, c *rawClient, after int) {
	t.Helper()
	reads := 0
	check := func() {
		t.Helper()
		vals, err := c.get("k")
		if err != nil || vals["k"] != "v2" {
			t.Fatalf("read %d of k after the write: %v %v, want v2", reads, vals, err)
		}
		reads++
	}
	poll.Until(t, 30*time.Second, "L1 to be up again", func() bool {
		check()
		return serverState(s.l1, s.l1mc.Addr) == "up"
	})
	poll.Until(t, 30*time.Second, "k promoted into the returned L1", func() bool {
		check()
		return presentDirect(t, s.l1mc.Addr, []string{"k"})["k"] == "v2"
	})
	for range after {
		check()
	}
	// Once for the failed write; a write that times out on a loaded
	// machine may take it down again, as it must.
	if st := s.l1.Stats(); st.Total.MarkedDown < 1 {
		t.Errorf("L1 marked down %d times, want at least 1", st.Total.MarkedDown)
	}
}

// TestL1TimedOutInvalidation: with a failure threshold that one timeout
// does not reach, an invalidation that times out on a hung L1 (SIGSTOP)
// must still take the server out of service before the write is
// acknowledged: the delete waits in the server's socket and, once it
// continues, may run after a read that a new connection sends.
func TestL1TimedOutInvalidation(t *testing.T) {
	s := startStrata(t, setup{threshold: 1, l1Pool: func(c *memcached.Config) {
		c.RequestTimeout = 200 * time.Millisecond
		c.FailureThreshold = memcached.MaxFailureThreshold
	}})
	c := mustDial(t, s.addr)
	c.deadline(60 * time.Second)
	promoteK(t, s, c, "v1")

	s.l1mc.Pause(t)
	resumed := false
	defer func() {
		if !resumed {
			s.l1mc.Resume(t)
		}
	}()
	if l, err := c.set("k", "v2"); err != nil || l != "STORED" {
		t.Fatalf("set v2 while L1 hangs: %q %v", l, err)
	}
	if st := serverState(s.l1, s.l1mc.Addr); st == "up" {
		t.Fatalf("L1 is %s after its invalidation timed out; want it out of service: %+v", st, s.l1.Stats().Total)
	}
	s.l1mc.Resume(t)
	resumed = true
	readsV2UntilServed(t, s, c, 50)
}

// TestL1RefusedInvalidation: an invalidation that finds the L1 connection
// full (a get waits on the hung server, and one request per connection is
// allowed) waits in the connection's backlog and fails with it when the
// get times out, never reaching the server. Without a fence the old copy
// is served as soon as the server answers again.
func TestL1RefusedInvalidation(t *testing.T) {
	s := startStrata(t, setup{threshold: 1, loops: 1, l1Pool: func(c *memcached.Config) {
		c.RequestTimeout = 2 * time.Second
		c.MaxPendingPerConn = 1
	}})
	c := mustDial(t, s.addr)
	c.deadline(60 * time.Second)
	promoteK(t, s, c, "v1")

	s.l1mc.Pause(t)
	resumed := false
	defer func() {
		if !resumed {
			s.l1mc.Resume(t)
		}
	}()
	// A second client's get of another key fills the one L1 connection.
	held := mustDial(t, s.addr)
	held.deadline(60 * time.Second)
	before := s.l1.Stats().Total.Requests
	fmt.Fprintf(held.w, "get other\r\n")
	if err := held.w.Flush(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, "the held get to reach L1", func() bool {
		return s.l1.Stats().Total.Requests > before
	})
	if l, err := c.set("k", "v2"); err != nil || l != "STORED" {
		t.Fatalf("set v2 while L1 is full: %q %v", l, err)
	}
	if st := s.l1.Stats(); st.Total.Waits == 0 {
		t.Fatalf("the invalidation did not wait behind the held get: %+v", st.Total)
	}
	s.l1mc.Resume(t)
	resumed = true
	// Once the held get has its answer, the L1 connection is free again.
	if vals, err := held.getReply(); err != nil || len(vals) != 0 {
		t.Fatalf("held get: %v %v, want a miss", vals, err)
	}
	readsV2UntilServed(t, s, c, 50)
}
