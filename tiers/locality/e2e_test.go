package locality_test

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// TestForwardAndServeLocally: a μ-shard first used in a is created owned
// by a; b forwards to a (the value lives in a's memcached only); a serves
// it locally; keys with no μ-shard stay in their own region.
func TestForwardAndServeLocally(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}})
	a, b := w.client(t, "a"), w.client(t, "b")
	if got := a.Set("u:{1}:name", "alice", 0); got != "STORED" {
		t.Fatalf("set in a: %q", got)
	}
	mustGet(t, b, "u:{1}:name", "alice")
	if got := b.Set("u:{1}:mail", "a@x", 0); got != "STORED" {
		t.Fatalf("set from b: %q", got)
	}
	mustGet(t, a, "u:{1}:mail", "a@x")
	if _, ok, _ := memGet(t, w.regions["b"], "u:{1}:mail"); ok {
		t.Fatal("a forwarded write left a copy in b's memcached")
	}
	if v, ok, _ := memGet(t, w.regions["a"], "u:{1}:mail"); !ok || v != "a@x" {
		t.Fatalf("a's memcached: %q %v", v, ok)
	}
	if got := b.Delete("u:{1}:mail"); got != "DELETED" {
		t.Fatalf("forwarded delete: %q", got)
	}
	if _, ok, _ := a.TryGet("u:{1}:mail"); ok {
		t.Fatal("the forwarded delete did not reach a")
	}
	// No μ-shard: local everywhere.
	if got := b.Set("plain", "mine", 0); got != "STORED" {
		t.Fatal(got)
	}
	if _, ok, _ := a.TryGet("plain"); ok {
		t.Fatal("a key with no μ-shard crossed regions")
	}
	sa, sb := w.regions["a"].tier.Stats(), w.regions["b"].tier.Stats()
	// b forwarded its get, set and delete; a served its own three
	// requests and b's three.
	if sb.Forwarded != 3 || sb.Local != 0 || sa.Local != 3 || sa.LinkServed != 3 || sa.Forwarded != 0 {
		t.Fatalf("a %+v\nb %+v", sa, sb)
	}
	if sb.ForwardedBytes == 0 {
		t.Fatal("no forwarded bytes counted")
	}
	if got := w.regions["b"].dir.counts("u: 1"); got != [2]int{0, 3} {
		t.Fatalf("b's accesses %v, want 3 remote", got)
	}
	if got := w.regions["a"].dir.counts("u: 1"); got != [2]int{3, 0} {
		t.Fatalf("a's accesses %v, want 3 local", got)
	}
}

// TestStaleCacheCorrectedOnFirstWrongOwner: b's cache says a owns a
// μ-shard that moved to c; a refuses, b re-reads bypassing its cache and
// the retry is served by c, on the first request.
func TestStaleCacheCorrectedOnFirstWrongOwner(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b", "c"}})
	const name = "u: 7"
	w.create(t, name, "c")
	if got := w.client(t, "c").Set("u:{7}", "v1", 0); got != "STORED" {
		t.Fatal(got)
	}
	// b's view lags: its lookups (not fresh ones) answer the old owner,
	// at the same epoch as the row (the worst case: the epoch alone does
	// not tell the views apart).
	w.regions["b"].dir.setStale(name, loccache.Location{Owner: "a", Epoch: 1, State: loccache.Stable})
	b := w.client(t, "b")
	mustGet(t, b, "u:{7}", "v1")
	sb, sa := w.regions["b"].tier.Stats(), w.regions["a"].tier.Stats()
	if sb.WrongOwner != 1 || sa.Refused != 1 || sb.Forwarded != 2 || sb.OwnerUnreachable != 0 {
		t.Fatalf("b %+v\na %+v", sb, sa)
	}
	// Corrected: the next request goes straight to c.
	mustGet(t, b, "u:{7}", "v1")
	if s := w.regions["b"].tier.Stats(); s.WrongOwner != 1 || s.Forwarded != 3 {
		t.Fatalf("after correction: %+v", s)
	}
}

// TestLinkRequestNeverForwarded: a and b each believe the other owns a
// μ-shard. A client request forwarded once is refused by the other side
// (which never forwards a link request), retried once after a fresh
// read that still disagrees, and answered: a miss for a read, an error
// for a write. Each side sees exactly the requests it should: no loop.
func TestLinkRequestNeverForwarded(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}})
	const name = "u: 9"
	w.create(t, name, "c-nowhere") // neither serves it in truth
	w.regions["a"].dir.setStale(name, loccache.Location{Owner: "b", Epoch: 1, State: loccache.Stable})
	w.regions["b"].dir.setStale(name, loccache.Location{Owner: "a", Epoch: 1, State: loccache.Stable})
	a := w.client(t, "a")
	if v, ok, errLine := a.TryGet("u:{9}"); ok || errLine != "" {
		t.Fatalf("read with disagreeing views: %q %v %q, want a miss", v, ok, errLine)
	}
	sa, sb := w.regions["a"].tier.Stats(), w.regions["b"].tier.Stats()
	// a forwarded to b (stale view), b refused; a read fresh: the row
	// names c-nowhere, which is no peer: owner unreachable.
	if sa.Forwarded != 1 || sa.WrongOwner != 1 || sa.OwnerUnreachable != 1 || sb.Refused != 1 || sb.Forwarded != 0 {
		t.Fatalf("a %+v\nb %+v", sa, sb)
	}
	if got := a.Set("u:{9}", "x", 0); !strings.HasPrefix(got, "SERVER_ERROR") {
		t.Fatalf("write with no reachable owner: %q", got)
	}
	// A link request straight to b with b's stale view: b refuses it and
	// forwards nothing, whatever its cache says.
	lc := dialClient(t, w.regions["b"].srv.LinkAddr())
	lc.Send("mg u:{9} v Oe1\r\n")
	if got := lc.ReadLine(); got != "SERVER_ERROR wrong_owner" {
		t.Fatalf("link request: %q", got)
	}
	if s := w.regions["b"].tier.Stats(); s.Forwarded != 0 {
		t.Fatalf("b forwarded a link request: %+v", s)
	}
}

// TestOwnerUnreachable: with the owner's strata gone, reads miss and
// writes and deletes answer SERVER_ERROR, within the timeout; the owner's
// return brings forwarding back.
func TestOwnerUnreachable(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}})
	const name = "u: 3"
	w.create(t, name, "a")
	b := w.client(t, "b")
	if got := b.Set("u:{3}", "v", 0); got != "STORED" {
		t.Fatal(got)
	}
	w.regions["a"].stop(t)
	start := time.Now()
	if v, ok, errLine := b.TryGet("u:{3}"); ok || errLine != "" {
		t.Fatalf("read with the owner gone: %q %v %q", v, ok, errLine)
	}
	if got := b.Set("u:{3}", "w", 0); !strings.HasPrefix(got, "SERVER_ERROR") {
		t.Fatalf("write with the owner gone: %q", got)
	}
	if got := b.Delete("u:{3}"); !strings.HasPrefix(got, "SERVER_ERROR") {
		t.Fatalf("delete with the owner gone: %q", got)
	}
	if el := time.Since(start); el > 15*time.Second {
		t.Fatalf("took %v", el)
	}
	if s := w.regions["b"].tier.Stats(); s.OwnerUnreachable != 3 {
		t.Fatalf("%+v", s)
	}
}

// TestOwnerHangs: an owner whose loops are stuck (a stopped process)
// costs a read the forward timeout and a miss.
func TestOwnerHangs(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}, timeout: time.Second})
	const name = "u: 4"
	w.create(t, name, "a")
	b := w.client(t, "b")
	if got := b.Set("u:{4}", "v", 0); got != "STORED" {
		t.Fatal(got)
	}
	stallPeer(t, w.regions["a"])
	if v, ok, errLine := b.TryGet("u:{4}"); ok || errLine != "" {
		t.Fatalf("read from a stalled owner: %q %v %q", v, ok, errLine)
	}
	if s := w.regions["b"].tier.Stats(); s.OwnerUnreachable != 1 {
		t.Fatalf("%+v", s)
	}
}

// stallPeer blocks every event loop of r, as a stopped process would.
// The loops are released at the end of the test.
func stallPeer(t *testing.T, r *region) {
	release := make(chan struct{})
	for i := 0; i < 2; i++ {
		r.srv.RunOnLoop(i, func() { <-release })
	}
	t.Cleanup(func() { close(release) })
}

// TestMaxTTLClamp: μ-shard writes live at most max_ttl, never included,
// wherever they are served; other keys keep their TTL.
func TestMaxTTLClamp(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}, maxTTL: 100 * time.Second})
	w.create(t, "u: 5", "a")
	a, b := w.client(t, "a"), w.client(t, "b")
	cases := []struct {
		c      *mctext.Conn
		key    string
		ttl    int
		lo, hi int
	}{
		{a, "u:{5}:never", 0, 95, 100},
		{a, "u:{5}:long", 5000, 95, 100},
		{a, "u:{5}:short", 50, 45, 50},
		{b, "u:{5}:fwd", 0, 95, 100},
		{a, "u:{5}:abs", int(time.Now().Unix()) + 5000, 95, 100},
		{a, "plain", 5000, 4995, 5000},
	}
	for _, c := range cases {
		if got := c.c.Set(c.key, "v", c.ttl); got != "STORED" {
			t.Fatalf("%s: %q", c.key, got)
		}
		_, ok, ttl := memGet(t, w.regions["a"], c.key)
		if !ok || ttl < c.lo || ttl > c.hi {
			t.Errorf("%s set with ttl %d: at a %v ttl %d, want %d..%d", c.key, c.ttl, ok, ttl, c.lo, c.hi)
		}
	}
}

// TestFencedRegionServesNothingLocally: a strata whose directory says its
// view is unconfirmed (it lost the control store) answers the μ-shards it
// would serve itself as for an unreachable owner — its clients' reads
// miss, writes fail, and other regions' forwarded requests do the same:
// a read forwarded to it misses, a write fails — while what it forwards
// still goes on, and keys with no μ-shard are served as ever. The value
// in its memcached is left alone.
func TestFencedRegionServesNothingLocally(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}})
	w.create(t, "u: 1", "a")
	w.create(t, "u: 2", "b")
	a, b := w.client(t, "a"), w.client(t, "b")
	for _, kv := range [][2]string{{"u:{1}", "mine"}, {"u:{2}", "theirs"}, {"plain", "p"}} {
		if got := a.Set(kv[0], kv[1], 0); got != "STORED" {
			t.Fatalf("set %s: %q", kv[0], got)
		}
	}
	w.regions["a"].dir.fenced.Store(true)
	before := w.regions["a"].tier.Stats()
	if v, ok, errLine := a.TryGet("u:{1}"); ok || errLine != "" {
		t.Fatalf("fenced read of its own μ-shard: %q %v %q, want a miss", v, ok, errLine)
	}
	if got := a.Set("u:{1}", "later", 0); !strings.HasPrefix(got, "SERVER_ERROR") {
		t.Fatalf("fenced write of its own μ-shard: %q", got)
	}
	if v, ok, errLine := b.TryGet("u:{1}"); ok || errLine != "" {
		t.Fatalf("a read forwarded to the fenced owner: %q %v %q, want a miss", v, ok, errLine)
	}
	if got := b.Set("u:{1}", "later", 0); !strings.HasPrefix(got, "SERVER_ERROR") {
		t.Fatalf("a write forwarded to the fenced owner: %q, want SERVER_ERROR", got)
	}
	mustGet(t, a, "u:{2}", "theirs") // forwarded to b: b checks the epoch
	mustGet(t, a, "plain", "p")
	after := w.regions["a"].tier.Stats()
	if d := after.OwnerUnreachable - before.OwnerUnreachable; d != 4 {
		t.Fatalf("owner_unreachable at a +%d, want 4 (its get and set, b's get and set)", d)
	}
	if after.Local != before.Local || after.LinkServed != before.LinkServed {
		t.Fatalf("served locally while fenced: %+v → %+v", before, after)
	}
	if v, ok, _ := memGet(t, w.regions["a"], "u:{1}"); !ok || v != "mine" {
		t.Fatalf("a's memcached while fenced: %q %v", v, ok)
	}
	w.regions["a"].dir.fenced.Store(false)
	mustGet(t, a, "u:{1}", "mine")
	mustGet(t, b, "u:{1}", "mine")
}

// TestLateLinkWriteRefused: a link write that reaches the owner after the
// deadline its sender gave it up at (bytes a network or a paused machine
// held back) is refused, and the value written since stays; a write
// within its deadline is served, and so is a read, whatever its age.
func TestLateLinkWriteRefused(t *testing.T) {
	w := newWorld(t, worldOpts{regions: []string{"a", "b"}})
	const name = "u: 5"
	w.create(t, name, "b")
	loc := w.publish(t, name)
	b := w.client(t, "b")
	if got := b.Set("u:{5}", "v2", 0); got != "STORED" {
		t.Fatalf("set through b: %q", got)
	}
	lc := dialClient(t, w.regions["b"].srv.LinkAddr())
	token := func(deadline time.Time) string {
		return string(linkproto.AppendToken(nil, linkproto.Token{Epoch: loc.Epoch, Deadline: deadline.UnixMilli()}))
	}
	lc.Send("ms u:{5} 2" + token(time.Now().Add(-time.Minute)) + "\r\nv1\r\n")
	if got := lc.ReadLine(); !strings.HasPrefix(got, "SERVER_ERROR") || !strings.Contains(got, "gave it up") {
		t.Fatalf("late link write: %q, want SERVER_ERROR", got)
	}
	if v, ok := b.Get("u:{5}"); !ok || v != "v2" {
		t.Fatalf("after the late write: %q %v, want v2", v, ok)
	}
	lc.Send("mg u:{5} v" + token(time.Now().Add(-time.Minute)) + "\r\n")
	if got := lc.ReadLine(); !strings.HasPrefix(got, "VA 2") {
		t.Fatalf("late link read: %q, want the value", got)
	}
	lc.ReadLine()
	lc.Send("ms u:{5} 2" + token(time.Now().Add(time.Minute)) + "\r\nv3\r\n")
	if got := lc.ReadLine(); !strings.HasPrefix(got, "HD") {
		t.Fatalf("link write within its deadline: %q, want HD", got)
	}
	if v, ok := b.Get("u:{5}"); !ok || v != "v3" {
		t.Fatalf("after the timely write: %q %v, want v3", v, ok)
	}
	if s := w.regions["b"].tier.Stats(); s.Late != 1 {
		t.Fatalf("Late = %d, want 1", s.Late)
	}
}
