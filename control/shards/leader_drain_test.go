package shards

import (
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// Drain empties a server through prepare, handoff, settle and final,
// waiting for every agent where the protocol says; undrain fills it again.
func TestDrainAndUndrain(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	view := NewView(r.st, map[string]TierInfo{"l2": {Shards: testShards, Members: addrs(r.servers)}})
	r.mustRound(l, 0)
	r.applyAll()
	if err := view.SetDrain(r.ctx, "l2", r.servers[1].Addr, true); err != nil {
		t.Fatal(err)
	}
	at := time.Second
	walk := func(wantTo func(MoveEntry) bool) {
		t.Helper()
		v := r.mustRound(l, at)
		_, p := r.published()
		if p.Phase != Prepare || len(p.Moves) == 0 {
			t.Fatalf("v%d: phase %q, %d moves; want prepare", v, p.Phase, len(p.Moves))
		}
		for _, mv := range p.Moves {
			if !wantTo(mv) || p.Owner[mv.Shard] != mv.From {
				t.Fatalf("prepare: move %+v, owner %d", mv, p.Owner[mv.Shard])
			}
		}
		// Not every agent applied prepare: no handoff yet.
		r.agents["a"].Applied = v
		r.report()
		if got := r.mustRound(l, at+time.Second); got != v {
			t.Fatalf("handoff published before every agent applied prepare")
		}
		r.applyAll()
		v = r.mustRound(l, at+2*time.Second)
		_, p = r.published()
		if p.Phase != Handoff {
			t.Fatalf("v%d: phase %q, want handoff", v, p.Phase)
		}
		for _, mv := range p.Moves {
			if p.Owner[mv.Shard] != mv.To {
				t.Fatalf("handoff: shard %d not owned by its destination", mv.Shard)
			}
		}
		r.agents["a"].Applied = v
		r.report()
		if got := r.mustRound(l, at+3*time.Second); got != v {
			t.Fatal("settle published before the grace window")
		}
		if got := r.mustRound(l, at+7*time.Second); got != v {
			t.Fatal("settle published before every agent applied handoff")
		}
		r.applyAll()
		v = r.mustRound(l, at+8*time.Second)
		if _, p = r.published(); p.Phase != Settle {
			t.Fatalf("v%d: phase %q, want settle", v, p.Phase)
		}
		if got := r.mustRound(l, at+9*time.Second); got != v {
			t.Fatal("final published before every agent applied settle")
		}
		r.applyAll()
		// Applied everywhere, but a fill's placeholder may outlive its
		// proxy by the lease TTL (SettleHold, 3s): settle holds.
		if got := r.mustRound(l, at+10*time.Second); got != v {
			t.Fatal("final published before the settle hold")
		}
		r.mustRound(l, at+11*time.Second)
		if _, p = r.published(); p.Phase != Final || len(p.Moves) != 0 {
			t.Fatalf("phase %q with %d moves, want final", p.Phase, len(p.Moves))
		}
		r.applyAll()
		at += 12 * time.Second
	}
	_, before := r.published()
	walk(func(mv MoveEntry) bool { return mv.From >= 0 })
	_, p := r.published()
	if c := r.ownedBy(p); c[1] != 0 || r.state(p, 1) != assign.Draining {
		t.Fatalf("after drain: counts %v, state %v", c, r.state(p, 1))
	}
	// The drained server is a former owner of everything it gave up.
	if got, want := len(p.Former[r.servers[1].Addr]), r.ownedBy(before)[1]; got != want {
		t.Fatalf("former shards of the drained server: %d, want %d", got, want)
	}
	// What the drained server still holds is stale: undrained, it is
	// flushed before it gets a shard.
	set := []byte("set left 0 0 3\r\nold\r\n")
	if reply, err := memcachedtest.Exchange(r.servers[1].Addr, set, 2*time.Second); err != nil || !strings.HasPrefix(string(reply), "STORED") {
		t.Fatalf("set: %q %v", reply, err)
	}
	if err := view.SetDrain(r.ctx, "l2", r.servers[1].Addr, false); err != nil {
		t.Fatal(err)
	}
	v := r.mustRound(l, at)
	if _, p = r.published(); r.state(p, 1) != assign.Returning || r.ownedBy(p)[1] != 0 {
		t.Fatalf("undrained: state %v, want returning with no shard", r.state(p, 1))
	}
	// Returning under a new incarnation (this version), so every pool
	// flushes it, even one that skips this map.
	if inc := p.Members[p.index(r.servers[1].Addr)].Incarnation; inc != v {
		t.Fatalf("undrained server's incarnation %d, want %d", inc, v)
	}
	r.applyAll()
	at += time.Second
	walk(func(mv MoveEntry) bool { return p.Members[mv.To].Addr == r.servers[1].Addr })
	_, p = r.published()
	// Balanced again: nobody above the mean (16) by more than 10 %.
	c := r.ownedBy(p)
	for _, n := range c {
		if n > 17 || c[1] == 0 || r.state(p, 1) != assign.Up {
			t.Fatalf("after undrain: counts %v, state %v", c, r.state(p, 1))
		}
	}
	if len(p.Former[r.servers[1].Addr]) != 0 {
		t.Fatal("the flush did not clear the undrained server's former shards")
	}
	if reply, err := memcachedtest.Exchange(r.servers[1].Addr, []byte("get left\r\n"), 2*time.Second); err != nil || string(reply) != "END\r\n" {
		t.Fatalf("undrained server not flushed: get left = %q %v", reply, err)
	}
	m, err := view.ShardMap(r.ctx, "l2")
	if err != nil || m.MovesInFlight != 0 || len(m.Servers) != 4 {
		t.Fatalf("view: %+v, %v", m, err)
	}
}

// A server added to the list is flushed before it owns shards, then gets
// some; a server removed from it has its shards failed over at once.
func TestMembershipFollowsTheList(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	r.mustRound(l, 0)
	r.applyAll()
	extra := memcachedtest.Start(t)
	if reply, err := memcachedtest.Exchange(extra.Addr, []byte("set old 0 0 1\r\nx\r\n"), 2*time.Second); err != nil || !strings.HasPrefix(string(reply), "STORED") {
		t.Fatalf("set: %q %v", reply, err)
	}
	r.servers = append(r.servers, shardmap.Server{Addr: extra.Addr, Weight: 1})
	l.SetMembers(r.servers)
	r.mustRound(l, time.Second)
	_, p := r.published()
	if r.state(p, 4) != assign.Returning || r.ownedBy(p)[4] != 0 {
		t.Fatalf("new member: state %v, %d shards; want returning with none", r.state(p, 4), r.ownedBy(p)[4])
	}
	r.applyAll()
	r.mustRound(l, 2*time.Second)
	if _, p = r.published(); r.state(p, 4) != assign.Up {
		t.Fatalf("new member: state %v, want up after its flush", r.state(p, 4))
	}
	// Rounds with every agent keeping up, a grace window apart, until the
	// batches are done: the new member owns shards.
	at := 3 * time.Second
	for i := 0; i < 12 && (p.Phase != Final || r.ownedBy(p)[4] == 0); i++ {
		r.applyAll()
		r.mustRound(l, at)
		_, p = r.published()
		at += 6 * time.Second
	}
	if p.Phase != Final || r.ownedBy(p)[4] == 0 {
		t.Fatalf("new member: phase %q, %d shards; want shards and no batch", p.Phase, r.ownedBy(p)[4])
	}
	if reply, _ := memcachedtest.Exchange(extra.Addr, []byte("get old\r\n"), 2*time.Second); string(reply) != "END\r\n" {
		t.Fatalf("new member not flushed: %q", reply)
	}

	v, before := r.published()
	gone := r.servers[0].Addr
	had := r.ownedBy(before)[0]
	r.servers = r.servers[1:]
	l.SetMembers(r.servers)
	if got := r.mustRound(l, at); got != v+1 {
		t.Fatalf("version %d, want %d", got, v+1)
	}
	_, p = r.published()
	if p.index(gone) >= 0 {
		t.Fatal("the removed server is still a member")
	}
	for sh, o := range before.Owner {
		if before.Members[o].Addr == gone && p.Members[p.Owner[sh]].State != assign.Up {
			t.Fatalf("shard %d of the removed server (%d shards) not failed over to an up server", sh, had)
		}
	}
}

// A periodic plan never moves a shard back to a server that handed it off
// since its last flush.
func TestNoMoveBackToAFormerOwner(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	p := l.initial()
	empty := r.servers[0].Addr
	p.Former = map[string][]int{}
	for sh, o := range p.Owner {
		if o == 0 {
			p.Owner[sh] = 1 // server 0 is up and owns nothing...
		}
		if sh%2 == 0 {
			p.Former[empty] = append(p.Former[empty], sh) // ...and may hold stale copies of the even shards
		}
	}
	if err := store.Publish(r.ctx, r.st, l.lead, mapKey("l2"), 1, p.Encode()); err != nil {
		t.Fatal(err)
	}
	r.applyAll()
	if v := r.mustRound(l, time.Second); v != 2 {
		t.Fatalf("version %d: want a batch towards the empty server", v)
	}
	_, q := r.published()
	onto := 0
	for _, mv := range q.Moves {
		if q.Members[mv.To].Addr == empty {
			onto++
			if mv.Shard%2 == 0 {
				t.Fatalf("shard %d moves back to a former owner before a flush", mv.Shard)
			}
		}
	}
	if onto == 0 {
		t.Fatal("no move onto the empty server")
	}
}

// A draining server empties even when the allocator's choices are former
// owners: its shards go to a server that never held them.
func TestDrainAvoidsFormerOwners(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	p := l.initial()
	p.Former = map[string][]int{}
	for sh := range p.Owner {
		for _, i := range []int{2, 3} {
			if p.Owner[sh] != i {
				p.Former[r.servers[i].Addr] = append(p.Former[r.servers[i].Addr], sh)
			}
		}
	}
	if err := store.Publish(r.ctx, r.st, l.lead, mapKey("l2"), 1, p.Encode()); err != nil {
		t.Fatal(err)
	}
	r.applyAll()
	view := NewView(r.st, map[string]TierInfo{"l2": {Shards: testShards, Members: addrs(r.servers)}})
	if err := view.SetDrain(r.ctx, "l2", r.servers[1].Addr, true); err != nil {
		t.Fatal(err)
	}
	r.mustRound(l, time.Second)
	_, q := r.published()
	if len(q.Moves) != r.ownedBy(p)[1] {
		t.Fatalf("%d moves for the %d shards of the draining server", len(q.Moves), r.ownedBy(p)[1])
	}
	for _, mv := range q.Moves {
		if to := q.Members[mv.To].Addr; to != r.servers[0].Addr {
			t.Fatalf("shard %d moves to %s, a former owner", mv.Shard, to)
		}
	}
}
