package etcdstore

import (
	"testing"
	"time"
)

func TestKeepPeriod(t *testing.T) {
	s := time.Second
	for _, c := range []struct{ ttl, want time.Duration }{
		{5 * s, 1500 * time.Millisecond}, // 1.67s, down to the grid's 250ms step
		{1 * s, 250 * time.Millisecond},  // 333ms
		{2 * s, 500 * time.Millisecond},  // 667ms
		{3 * s, s},
		{500 * time.Millisecond, keepRetry}, // never below a step
	} {
		if got := keepPeriod(c.ttl); got != c.want {
			t.Errorf("keepPeriod(%v) = %v, want %v", c.ttl, got, c.want)
		}
	}
}

// After a renewal: the deadline moves to the send plus the renewed TTL
// and the next renewal is a period away on the grid; a failure keeps the
// deadline and retries a step away, until the deadline passes; a lease
// etcd no longer has is lost at once.
func TestAfterKeepAlive(t *testing.T) {
	ttl := 5 * time.Second
	sent := time.Unix(1_700_000_000, 0)
	now := sent.Add(3 * time.Millisecond)
	deadline := sent.Add(2 * time.Second)

	d, wait, alive := afterKeepAlive(sent, now, deadline, ttl, keepResult{ttl: ttl})
	if !alive || !d.Equal(sent.Add(ttl)) || wait <= 0 || wait > keepPeriod(ttl) {
		t.Errorf("renewed: deadline %v, wait %v, alive %v; want send+TTL, within a period, alive", d.Sub(sent), wait, alive)
	}
	// Renewed by etcd to a shorter TTL than asked: etcd's word counts.
	if d, _, _ := afterKeepAlive(sent, now, deadline, ttl, keepResult{ttl: 2 * time.Second}); !d.Equal(sent.Add(2 * time.Second)) {
		t.Errorf("renewed to 2s: deadline %v after the send", d.Sub(sent))
	}

	d, wait, alive = afterKeepAlive(sent, now, deadline, ttl, keepResult{err: true})
	if !alive || !d.Equal(deadline) || wait <= 0 || wait > keepRetry {
		t.Errorf("failed before the deadline: deadline %v, wait %v, alive %v; want kept, within a step, alive", d.Sub(sent), wait, alive)
	}
	if _, _, alive := afterKeepAlive(sent, deadline, deadline, ttl, keepResult{err: true}); alive {
		t.Error("failed at the deadline: still alive")
	}
	if _, _, alive := afterKeepAlive(sent, now, deadline, ttl, keepResult{err: true, gone: true}); alive {
		t.Error("gone: still alive")
	}
	// A renewal that came back after its own deadline is no proof.
	if _, _, alive := afterKeepAlive(sent, sent.Add(6*time.Second), deadline, ttl, keepResult{ttl: ttl}); alive {
		t.Error("an answer later than the TTL after its send: still alive")
	}
}
