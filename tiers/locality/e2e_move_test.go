package locality_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// TestMoveStepByStep follows one μ-shard from a to b through the three
// states and checks, at each, who serves, what each region's memcached
// holds, and that a miss at the destination is filled from the source.
func TestMoveStepByStep(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}})
	ra, rb := w.regions["a"], w.regions["b"]
	a, b := w.client(t, "a"), w.client(t, "b")
	const key = "u:{2}:k"
	w.create(t, "u: 2", "a")
	if got := a.Set(key, "v1", 0); got != "STORED" {
		t.Fatal(got)
	}
	// b held a copy from an earlier stay (expired in real life; the
	// Prepare deletes are belt and braces).
	if got := dialClient(t, rb.mc.Addr).Set(key, "old", 0); got != "STORED" {
		t.Fatal(got)
	}
	w.move(t, "u: 2", "b", func(loc loccache.Location) {
		switch loc.State {
		case loccache.Prepare:
			// a still serves: b forwards; a's writes delete at b.
			before := rb.tier.Stats().Forwarded
			mustGet(t, b, key, "v1")
			if got := b.Set(key, "v2", 0); got != "STORED" {
				t.Fatalf("prepare: set from b: %q", got)
			}
			if rb.tier.Stats().Forwarded != before+2 {
				t.Fatalf("prepare: b did not forward: %+v", rb.tier.Stats())
			}
			if _, ok, _ := memGet(t, rb, key); ok {
				t.Fatal("prepare: a's write left b's old copy")
			}
			if v, ok, _ := memGet(t, ra, key); !ok || v != "v2" {
				t.Fatalf("prepare: a holds %q %v", v, ok)
			}
		case loccache.Migrating:
			// b serves: its miss is filled from a, with the remaining TTL.
			mustGet(t, b, key, "v2")
			if s := rb.tier.Stats(); s.Fills != 1 {
				t.Fatalf("migrating: %+v", s)
			}
			if v, ok, ttl := memGet(t, rb, key); !ok || v != "v2" || ttl <= 0 {
				t.Fatalf("migrating: b holds %q %v ttl %d", v, ok, ttl)
			}
			// a forwards to b now; b's writes delete at a.
			mustGet(t, a, key, "v2")
			if got := a.Set(key, "v3", 0); got != "STORED" {
				t.Fatalf("migrating: set from a: %q", got)
			}
			if _, ok, _ := memGet(t, ra, key); ok {
				t.Fatal("migrating: b's write left a's copy")
			}
			// A delete at b deletes at a too, and a miss then stays a miss.
			if got := b.Delete(key); got != "DELETED" {
				t.Fatalf("migrating: delete: %q", got)
			}
			if _, ok, _ := b.TryGet(key); ok {
				t.Fatal("migrating: a deleted key came back")
			}
			if got := b.Set(key, "v4", 0); got != "STORED" {
				t.Fatal(got)
			}
		case loccache.Stable:
			fills := rb.tier.Stats().Fills
			mustGet(t, b, key, "v4")
			mustGet(t, a, key, "v4")
			if s := rb.tier.Stats(); s.Fills != fills {
				t.Fatalf("stable: b still fills: %+v", s)
			}
		}
	})
	if s := rb.tier.Stats(); s.WrongOwner != 0 || s.OwnerUnreachable != 0 || s.OtherFailed != 0 {
		t.Fatalf("b: %+v", s)
	}
}

// TestWriteFailsWhenTheOtherSideIsGone: during Migrating, a write at the
// destination whose delete at the source cannot be done is answered
// SERVER_ERROR (the value may be written here; a later miss is allowed,
// a stale read never).
func TestWriteFailsWhenTheOtherSideIsGone(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}})
	w.create(t, "u: 6", "a")
	b := w.client(t, "b")
	w.move(t, "u: 6", "b", func(loc loccache.Location) {
		if loc.State != loccache.Migrating {
			return
		}
		w.regions["a"].stop(t)
		if got := b.Set("u:{6}", "x", 0); got == "STORED" {
			t.Fatal("a write was acknowledged without deleting at the source")
		}
		if s := w.regions["b"].tier.Stats(); s.OtherFailed != 1 {
			t.Fatalf("%+v", s)
		}
		// A read that misses cannot fill from the gone source: a miss.
		if _, ok, errLine := b.TryGet("u:{6}:other"); ok || errLine != "" {
			t.Fatalf("read: %v %q", ok, errLine)
		}
	})
}

// TestSourceDeleteNotBehindAForward: a write at a migration's source
// deletes the key at the destination with a source request, and that
// request must not wait behind a request the source forwarded to the
// destination earlier and the destination has not answered. Here the
// forward waits on b's location lookup; in a running system it waits on
// b's own source request back to a, and when a's source request sat
// behind it on one connection, each region waited for the other until
// the link timed out and the write failed.
func TestSourceDeleteNotBehindAForward(t *testing.T) {
	// One loop: both clients of a share a's connections to b. The routers
	// wait for a lookup longer than the link waits for a reply, so the
	// forward stays unanswered until the test releases it.
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}, loops: 1, timeout: 3 * time.Second, forward: time.Minute})
	ra, rb := w.regions["a"], w.regions["b"]
	w.create(t, "u: 1", "b")
	w.create(t, "u: 2", "a")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, _, err := w.table.Get(ctx, "u: 2")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.table.Migrate(ctx, w.lead, "u: 2", e.Epoch, "b", "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	if loc := w.publish(t, "u: 2"); loc.State != loccache.Prepare {
		t.Fatalf("u: 2 is %+v", loc)
	}
	const key = "u:{2}:k"
	if got := dialClient(t, rb.mc.Addr).Set(key, "old", 0); got != "STORED" {
		t.Fatal(got)
	}

	release := make(chan struct{})
	rb.dir.mu.Lock()
	rb.dir.block["u: 1"] = release
	rb.dir.mu.Unlock()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	reader := w.client(t, "a")
	reader.Send("get u:{1}:x\r\n") // a forwards it to b, where it waits
	poll.Until(t, 20*time.Second, "b's lookup of u: 1", func() bool {
		rb.dir.mu.Lock()
		defer rb.dir.mu.Unlock()
		return rb.dir.resolves == 1
	})

	if got := w.client(t, "a").Set(key, "v", 0); got != "STORED" {
		t.Fatalf("set at the source while a forward waits at the destination: %q", got)
	}
	if _, ok, _ := memGet(t, rb, key); ok {
		t.Fatal("the destination kept its copy")
	}
	if s := ra.tier.Stats(); s.OtherFailed != 0 {
		t.Fatalf("a: %+v", s)
	}

	close(release)
	released = true
	// The forward ends as a miss: b serves u: 1 and holds nothing, or a's
	// link gave up on it.
	if v, ok, errLine := reader.TryGet("u:{1}:x"); ok || errLine != "" {
		t.Fatalf("forwarded get: %q %v %q", v, ok, errLine)
	}
}
