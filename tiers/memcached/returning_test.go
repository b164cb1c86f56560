package memcached

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
)

// markDown records failures until the pool marks s down, as traffic
// would.
func markDown(t *testing.T, p *Pool, s *server) {
	t.Helper()
	for range p.cfg.FailureThreshold {
		s.failure(p)
	}
	if st := healthState(s.state.Load()); st == stateUp {
		t.Fatalf("server still up after %d failures", p.cfg.FailureThreshold)
	}
}

// TestReturnWaitsForSuspects: a server that answers a probe stays
// "returning" while it lists a connection we dropped with requests
// outstanding, and its flush comes after that connection's last request
// ran. The suspect here is a connection the test holds, standing for one
// whose requests a hung memcached had not run yet.
func TestReturnWaitsForSuspects(t *testing.T) {
	for _, flush := range []bool{true, false} {
		mc := memcachedtest.Start(t)
		h := newHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}, ProbeInterval: 20 * time.Millisecond,
			RequestTimeout: time.Second, FlushOnReturn: flush}, 0)
		p := h.pool
		s := p.byAddr[mc.Addr]
		expect(t, "set before", h.one(set("k", "v")), tiers.StatusStored, "")

		sus, err := net.Dial("tcp", mc.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer sus.Close()
		s.mu.Lock()
		s.suspects = map[string]struct{}{sus.LocalAddr().String(): {}}
		s.mu.Unlock()
		markDown(t, p, s)

		// The probe answers, and the server stays returning for as many
		// checks as we care to watch.
		h.loops.until(t, 10*time.Second, "five return checks", func() bool {
			st := p.Stats().Servers[0]
			if st.State == "up" {
				t.Fatal("up while a suspect connection is listed")
			}
			return st.State == "returning" && st.ReturnChecks >= 5
		})
		if r := h.one(get("k")); r.Status != tiers.StatusError {
			t.Fatalf("get while returning: %+v, want an error", r)
		}

		// The suspect's last request runs, then it goes away.
		_ = sus.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := sus.Write([]byte("set late 0 0 1\r\nx\r\n")); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(sus).ReadString('\n'); err != nil || line != "STORED\r\n" {
			t.Fatalf("suspect's set: %q %v", line, err)
		}
		_ = sus.Close()
		h.loops.until(t, 10*time.Second, "the server up", func() bool { return p.Stats().Servers[0].State == "up" })

		if flush {
			expect(t, "late write, flushed after it ran", h.one(get("late")), tiers.StatusMiss, "")
			expect(t, "old data, flushed", h.one(get("k")), tiers.StatusMiss, "")
		} else {
			expect(t, "late write kept", h.one(get("late")), tiers.StatusHit, "x")
			expect(t, "old data kept", h.one(get("k")), tiers.StatusHit, "v")
		}
		s.mu.Lock()
		left := len(s.suspects)
		s.mu.Unlock()
		if left != 0 {
			t.Errorf("%d suspects left after the return", left)
		}
	}
}

// TestFenceDropsConnections: while a server is not up, each loop drops its
// connection at its next check, recording it as a suspect if requests were
// outstanding; the prober waits for that before anything else.
func TestFenceDropsConnections(t *testing.T) {
	addr, accepted := blackHole(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: addr}}, ProbeInterval: time.Hour, RequestTimeout: MaxRequestTimeout}, 0)
	p := h.pool
	s := p.byAddr[addr]
	if s.fencedAll(1) != true {
		t.Fatal("a slot that never dialled needs no fence")
	}
	c := newCall(get("k"))
	p.Do(&c.op)
	p.FlushLoop(0)
	<-accepted
	h.loops.until(t, 5*time.Second, "the request written", func() bool { return s.conns[0].state == stateOpen })
	if s.fencedAll(1) {
		t.Fatal("fenced before the loop dropped its connection")
	}
	markDown(t, p, s)
	h.wait(c)
	if c.op.Res.Status != tiers.StatusError {
		t.Fatalf("request on the dropped connection: %+v", c.op.Res)
	}
	if !s.fencedAll(s.downGen.Load()) {
		t.Fatal("not fenced after the loop dropped its connection")
	}
	s.mu.Lock()
	n := len(s.suspects)
	s.mu.Unlock()
	if n != 1 {
		t.Errorf("%d suspects, want the dropped connection", n)
	}
	// A request that raced the mark-down does not dial.
	bc := s.conns[0]
	c2 := newCall(get("k"))
	bc.submit(&c2.op, nil, 0)
	if !c2.done || c2.op.Res.Status != tiers.StatusError || bc.state != stateIdle {
		t.Fatalf("submit to a down server: done %v %+v state %v", c2.done, c2.op.Res, bc.state)
	}
}

func TestSettled(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		since, now time.Time
		want       bool
	}{
		{time.Time{}, t0, false},
		{t0, t0, false},
		{t0, t0.Add(999 * time.Millisecond), false},
		{t0, t0.Add(time.Second), true},
	} {
		if got := settled(c.since, c.now, time.Second); got != c.want {
			t.Errorf("settled(%v, %v) = %v", c.since, c.now, got)
		}
	}
}

// TestParseStatsConnsReal parses what a real memcached answers, and finds
// the connection that asked.
func TestParseStatsConnsReal(t *testing.T) {
	mc := memcachedtest.Start(t)
	nc, err := net.Dial("tcp", mc.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	reply, err := readStatsConns(nc, bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := parseStatsConns(reply)
	if err != nil {
		t.Fatalf("%v in\n%s", err, reply)
	}
	found := false
	for _, a := range addrs {
		found = found || string(a) == nc.LocalAddr().String()
	}
	if !found {
		t.Errorf("our address %s not among %q", nc.LocalAddr(), addrs)
	}
}

func TestParseStatsConns(t *testing.T) {
	good := "STAT 23:addr tcp:127.0.0.1:11211\r\nSTAT 23:state conn_listening\r\n" +
		"STAT 24:addr tcp:127.0.0.1:5000\r\nSTAT 24:listen_addr tcp:127.0.0.1:11211\r\n" +
		"STAT 25:addr tcp6:[::1]:6000\r\nSTAT 26:addr udp:127.0.0.1:7000\r\nSTAT 27:addr unix:/run/memcached.sock\r\nEND\r\n"
	got, err := parseStatsConns([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{[]byte("127.0.0.1:11211"), []byte("127.0.0.1:5000"), []byte("[::1]:6000")}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	for _, bad := range []string{
		"", "END", "END\r\nx", "STAT 1:addr\r\nEND\r\n", "ERROR\r\n", "STAT :addr tcp:a:1\r\nEND\r\n",
		"STAT 1:addr tcp:a:1\nEND\r\n", "STAT 1:addr tcp:a:1\r\n",
	} {
		if _, err := parseStatsConns([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzParseStatsConns: the parser never panics, and every address it
// returns is a piece of the input that a "STAT n:addr tcp..." line held.
func FuzzParseStatsConns(f *testing.F) {
	f.Add([]byte("END\r\n"))                                                               // no connection
	f.Add([]byte("STAT 24:addr tcp:127.0.0.1:5000\r\nEND\r\n"))                            // one client
	f.Add([]byte("STAT 25:addr tcp6:[::1]:6000\r\nSTAT 25:state conn_new_cmd\r\nEND\r\n")) // IPv6
	f.Add([]byte("STAT 26:addr udp:127.0.0.1:7000\r\nEND\r\n"))                            // UDP, skipped
	f.Add([]byte("STAT 1:addr tcp:\r\nEND\r\n"))                                           // empty address
	f.Add([]byte("STAT 1:addr tcp:a:1\r\nEND\r\ntrailing"))                                // bytes after END
	f.Add([]byte("SERVER_ERROR out of memory\r\n"))                                        // not a stats reply
	f.Fuzz(func(t *testing.T, b []byte) {
		addrs, err := parseStatsConns(b)
		if err != nil {
			return
		}
		if !bytes.HasSuffix(b, []byte("END\r\n")) {
			t.Fatalf("accepted a reply without END: %q", b)
		}
		for _, a := range addrs {
			if len(a) == 0 || !bytes.Contains(b, a) || bytes.ContainsAny(a, " \r\n") {
				t.Fatalf("address %q from %q", a, b)
			}
		}
	})
}
