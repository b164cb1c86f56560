package memcached

import (
	"strings"
	"testing"
	"time"
)

func TestHealthMachine(t *testing.T) {
	const sec = int64(time.Second)
	h := newHealth(3, 2*sec)
	now := int64(100 * sec)

	// Failures must be consecutive: a success resets the streak.
	fail := func(times int) (downs int) {
		for range times {
			if h.failure(now) {
				downs++
			}
		}
		return downs
	}
	if fail(2) != 0 {
		t.Fatal("down before the threshold")
	}
	h.success()
	if fail(2) != 0 {
		t.Fatal("the success did not reset the streak")
	}
	if !h.failure(now) || h.state != stateDown || h.downs != 1 {
		t.Fatalf("third failure in a row: state %v downs %d", h.state, h.downs)
	}
	// While down, traffic outcomes do not matter.
	h.success()
	if h.failure(now) || h.state != stateDown {
		t.Fatal("traffic changed a down server")
	}
	// Probes are due one interval after going down.
	if h.probeDue(now+sec) || h.untilProbe(now+sec) != sec {
		t.Fatal("probe due too early")
	}
	if !h.probeDue(now+2*sec) || h.state != stateProbing {
		t.Fatal("probe not due after the interval")
	}
	if h.probeDue(now + 3*sec) {
		t.Fatal("a second probe while one is in flight")
	}
	// A failed probe waits another interval.
	if h.probeResult(false, now+2*sec) || h.state != stateDown {
		t.Fatal("failed probe did not leave the server down")
	}
	if h.probeDue(now+3*sec) || !h.probeDue(now+4*sec) {
		t.Fatal("next probe not one interval after the failed one")
	}
	// An answered probe makes it returning, not up: it is not routable
	// until the returning protocol has made it safe.
	if !h.probeResult(true, now+4*sec) || h.state != stateReturning || h.state.String() != "returning" {
		t.Fatalf("answered probe: state %v", h.state)
	}
	if h.probeResult(true, now+5*sec) || h.probeDue(now+9*sec) || h.failure(now) {
		t.Fatal("a probe result, probe or failure changed a returning server")
	}
	// Failing to make it safe puts it down again for one interval.
	if h.returned(false, now+5*sec) || h.state != stateDown || h.state.String() != "down" {
		t.Fatalf("failed return: state %v", h.state)
	}
	if h.probeDue(now+6*sec) || !h.probeDue(now+7*sec) || h.state.String() != "down" {
		t.Fatal("next probe not one interval after the failed return")
	}
	if !h.probeResult(true, now+7*sec) {
		t.Fatal("second answered probe")
	}
	// Made safe: up with a clean streak.
	if !h.returned(true, now+8*sec) || h.state != stateUp || h.fails != 0 || h.state.String() != "up" {
		t.Fatalf("returned: state %v fails %d", h.state, h.fails)
	}
	if h.returned(true, now+9*sec) || h.probeResult(true, now+9*sec) {
		t.Fatal("a return or probe result without a probe changed something")
	}
	if fail(2) != 0 || fail(1) != 1 || h.downs != 2 {
		t.Fatal("the threshold does not apply again after recovery")
	}
}

func TestBackoffDelay(t *testing.T) {
	limit := time.Second
	want := []time.Duration{0, 0, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
	for f, w := range want {
		if got := backoffDelay(f, limit); got != w {
			t.Errorf("failures %d: %v, want %v", f, got, w)
		}
	}
	if got := backoffDelay(50, limit); got != limit {
		t.Errorf("failures 50: %v, want the cap %v", got, limit)
	}
}

func TestExpired(t *testing.T) {
	if expired(1000, 1250, 250) || !expired(1000, 1251, 250) {
		t.Error("a request expires strictly after the limit")
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{Servers: []Server{{Addr: "127.0.0.1:11211"}, {Addr: "h:1", Weight: 3}}}
	if err := good.validate(); err != nil {
		t.Fatal(err)
	}
	if good.Shards != DefaultShards || good.Seed != DefaultSeed || good.RequestTimeout != DefaultRequestTimeout ||
		good.DialTimeout != DefaultDialTimeout || good.FailureThreshold != 3 || good.Servers[0].Weight != 1 ||
		good.MaxItemSize != DefaultMaxItemSize || good.MaxBufferedBytesPerConn != DefaultMaxBuffered {
		t.Errorf("defaults not filled: %+v", good)
	}
	bad := []Config{
		{},
		{Servers: []Server{{Addr: "nohostport"}}},
		{Servers: []Server{{Addr: "a:1"}, {Addr: "a:1"}}},
		{Servers: []Server{{Addr: "a:1", Weight: -1}}},
		{Servers: []Server{{Addr: "a:1"}}, Shards: -1},
		{Servers: []Server{{Addr: "a:1"}}, RequestTimeout: time.Microsecond},
		{Servers: []Server{{Addr: "a:1"}}, FailureThreshold: -2},
		{Servers: []Server{{Addr: "a:1"}}, MaxItemSize: 4 << 20, MaxBufferedBytesPerConn: 4 << 20},
	}
	for i, c := range bad {
		if err := c.validate(); err == nil {
			t.Errorf("config %d accepted: %+v", i, c)
		}
	}
	if d := tickFor(250 * time.Millisecond); d != 50*time.Millisecond {
		t.Errorf("tick for 250ms: %v", d)
	}
	if d := tickFor(time.Hour); d != 100*time.Millisecond {
		t.Errorf("tick for 1h: %v", d)
	}
}

func TestAppendStats(t *testing.T) {
	p, err := New(Config{Servers: []Server{{Addr: "127.0.0.1:1"}, {Addr: "127.0.0.1:2"}}, Shards: 64}, newTestLoops(1))
	if err != nil {
		t.Fatal(err)
	}
	out := string(p.AppendStats(nil, "l2"))
	for _, want := range []string{
		"STAT l2_requests 0\r\n",
		"STAT l2_shards 64\r\n",
		"STAT l2_servers 2\r\n",
		"STAT l2_127.0.0.1_1_state up\r\n",
		"STAT l2_127.0.0.1_2_timeouts 0\r\n",
		"STAT l2_127.0.0.1_2_reconnects 0\r\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stats lack %q:\n%s", want, out)
		}
	}
	st := p.Stats()
	if st.Servers[0].Shards+st.Servers[1].Shards != 64 {
		t.Errorf("shards per server do not add up: %+v", st.Servers)
	}
}

// TestHealthTaint: a failed write takes an up server down at once,
// whatever the failure count, and starts a new down spell; it changes
// nothing for a server that is not up.
func TestHealthTaint(t *testing.T) {
	const sec = int64(time.Second)
	h := newHealth(1000, 2*sec)
	now := int64(100 * sec)
	if h.failure(now) || h.state != stateUp {
		t.Fatal("one failure of 1000 took the server down")
	}
	if !h.taint(now) || h.state != stateDown || h.downs != 1 || h.untilProbe(now) != 2*sec {
		t.Fatalf("taint of an up server: state %v downs %d", h.state, h.downs)
	}
	if h.taint(now+sec) || h.downs != 1 {
		t.Fatal("taint of a down server started another down spell")
	}
	if !h.probeDue(now+2*sec) || !h.probeResult(true, now+2*sec) {
		t.Fatal("probe after the taint")
	}
	if h.taint(now+2*sec) || h.state != stateReturning {
		t.Fatal("taint of a returning server changed it")
	}
	if !h.returned(true, now+3*sec) || h.fails != 0 {
		t.Fatal("return after the taint")
	}
	if !h.taint(now+4*sec) || h.downs != 2 {
		t.Fatalf("taint after the return: downs %d, want a second spell", h.downs)
	}
}
