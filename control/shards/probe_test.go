package shards

import (
	"bufio"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
)

// The leader's probes keep one connection per server: rounds of probes
// open no new ones while the server answers; a restarted server is
// probed on a new connection in the same probe; a paused one fails
// (its timeout); a server no longer listed loses its connection.
func TestKeptProbes(t *testing.T) {
	s := memcachedtest.Start(t)
	k := newKeptProbes(Wire{Timeout: 500 * time.Millisecond})
	defer k.close()
	before := totalConns(t, s.Addr)
	for i := 0; i < 5; i++ {
		if got := k.probeAll(t.Context(), []string{s.Addr}); !got[s.Addr] {
			t.Fatalf("probe %d of a live server failed", i)
		}
	}
	// One connection for the probes, one for the stats read after them.
	if n := totalConns(t, s.Addr) - before; n != 2 {
		t.Fatalf("%d connections opened by five probes and one stats read, want 2", n)
	}
	s.Restart(t)
	if got := k.probeAll(t.Context(), []string{s.Addr}); !got[s.Addr] {
		t.Fatal("the first probe after a restart failed")
	}
	s.Pause(t)
	if got := k.probeAll(t.Context(), []string{s.Addr}); got[s.Addr] {
		t.Fatal("a paused server answered")
	}
	s.Resume(t)
	if got := k.probeAll(t.Context(), []string{s.Addr}); !got[s.Addr] {
		t.Fatal("a resumed server failed its probe")
	}
	k.probeAll(t.Context(), nil)
	if len(k.conns) != 0 {
		t.Fatalf("%d connections kept for no server", len(k.conns))
	}
}

// totalConns reads memcached's total_connections on a new connection.
func totalConns(t *testing.T, addr string) int {
	t.Helper()
	c := mctext.Dial(t, addr)
	defer c.Close()
	v := c.Stats("")["total_connections"]
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("total_connections %q: %v", v, err)
	}
	return n
}

// A kept connection keeps no deadline between probes: an armed one is a
// timer that fires a probe timeout after every round with nothing to do.
func TestKeptProbeClearsItsDeadline(t *testing.T) {
	s := memcachedtest.Start(t)
	k := newKeptProbes(Wire{Timeout: time.Second})
	defer k.close()
	nc, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	rc := &deadlineConn{Conn: nc}
	k.conns[s.Addr] = &probeConn{Conn: rc, r: bufio.NewReaderSize(rc, 256)}
	if got := k.probeAll(t.Context(), []string{s.Addr}); !got[s.Addr] {
		t.Fatal("the probe of a live server failed")
	}
	if k.conns[s.Addr].Conn != rc {
		t.Fatal("the probe did not use the kept connection")
	}
	if len(rc.set) < 2 || rc.set[0].IsZero() || !rc.set[len(rc.set)-1].IsZero() {
		t.Fatalf("deadlines set %v: want the probe's, then none", rc.set)
	}
}

// deadlineConn records the deadlines set on a connection.
type deadlineConn struct {
	net.Conn
	set []time.Time
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return c.Conn.SetDeadline(t)
}
