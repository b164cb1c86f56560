package shards

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/placement/assign"
)

// The first round publishes the pools' own map unchanged.
func TestFirstPublicationKeepsTheInitialMap(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	if v := r.mustRound(l, 0); v != 1 {
		t.Fatalf("version %d, want 1", v)
	}
	_, p := r.published()
	for sh, o := range p.Owner {
		if p.Members[o].Addr != r.cfg.Initial.OwnerAddr(sh) {
			t.Fatalf("shard %d moved on the first publication", sh)
		}
	}
	if v := r.mustRound(l, time.Second); v != 1 {
		t.Fatalf("a round with nothing to do published version %d", v)
	}
}

// A dead server is declared only after Detection and with the agents'
// agreement, and then all its shards move in one publication; no other
// shard moves.
func TestDeadServerFailsOverInOneStep(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	r.mustRound(l, 0)
	r.applyAll()
	_, before := r.published()
	r.agents["a"].Unreachable = []string{r.servers[2].Addr}
	r.report()
	if v := r.mustRound(l, time.Second, 2); v != 1 {
		t.Fatalf("declared at first failure: version %d", v)
	}
	if v := r.mustRound(l, 2*time.Second, 2); v != 1 {
		t.Fatalf("declared before detection elapsed: version %d", v)
	}
	if v := r.mustRound(l, 3*time.Second, 2); v != 2 {
		t.Fatalf("not declared after detection: version %d, want 2", v)
	}
	_, after := r.published()
	if after.Phase != Final || len(after.Moves) != 0 {
		t.Fatalf("failover published phase %q with %d moves; want a final map", after.Phase, len(after.Moves))
	}
	if got := r.state(after, 2); got != assign.Down {
		t.Fatalf("state %v, want down", got)
	}
	if inc := after.Members[after.index(r.servers[2].Addr)].Incarnation; inc != 2 {
		t.Fatalf("dead server's incarnation %d, want 2 (the version that took its shards)", inc)
	}
	if c := r.ownedBy(after); c[2] != 0 {
		t.Fatalf("counts %v: the dead server still owns shards", c)
	}
	for sh := range after.Owner {
		was, now := before.Members[before.Owner[sh]].Addr, after.Members[after.Owner[sh]].Addr
		if was != r.servers[2].Addr && was != now {
			t.Fatalf("shard %d moved from a live server", sh)
		}
	}
}

// A deposed leader's publication is refused, and the next leader continues
// from the last published version and its states.
func TestDeposedLeaderCannotPublish(t *testing.T) {
	r := newRig(t)
	old, sess := r.leader()
	r.mustRound(old, 0)
	r.applyAll()
	r.agents["a"].Unreachable = []string{r.servers[3].Addr}
	r.agents["b"].Unreachable = []string{r.servers[3].Addr}
	r.report()
	r.mustRound(old, time.Second, 3)
	if v := r.mustRound(old, 3*time.Second, 3); v != 2 {
		t.Fatalf("version %d, want 2", v)
	}
	// The old leader's lease ends (its process hangs, say) and another
	// takes over; the old one does not know yet.
	_ = sess.Close()
	next, _ := r.leader()
	if _, err := r.round(old, 4*time.Second); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("deposed leader's round: %v, want ErrFenced", err)
	}
	if v := r.mustRound(next, 4*time.Second, 3); v != 2 {
		t.Fatalf("new leader published version %d over the same state", v)
	}
	_, p := r.published()
	if r.state(p, 3) != assign.Down || r.ownedBy(p)[3] != 0 {
		t.Fatal("the new leader lost the failover of its predecessor")
	}
	// Server 3 answers again: returning, then flushed once every agent
	// applied the map that took its shards and reaches it.
	set := []byte("set stale 0 0 3\r\nold\r\n")
	if reply, err := memcachedtest.Exchange(r.servers[3].Addr, set, 2*time.Second); err != nil || !strings.HasPrefix(string(reply), "STORED") {
		t.Fatalf("set: %q %v", reply, err)
	}
	if v := r.mustRound(next, 5*time.Second); v != 3 {
		t.Fatalf("version %d, want 3", v)
	}
	if _, p = r.published(); r.state(p, 3) != assign.Returning {
		t.Fatalf("state %v, want returning", r.state(p, 3))
	}
	r.mustRound(next, 6*time.Second) // agents still report it unreachable
	if _, p = r.published(); r.state(p, 3) != assign.Returning {
		t.Fatal("returned before the agents reach it")
	}
	r.agents["a"].Unreachable, r.agents["b"].Unreachable = nil, nil
	r.applyAll()
	r.mustRound(next, 7*time.Second)
	if _, p = r.published(); r.state(p, 3) != assign.Up {
		t.Fatalf("state %v, want up after the flush", r.state(p, 3))
	}
	reply, err := memcachedtest.Exchange(r.servers[3].Addr, []byte("get stale\r\n"), 2*time.Second)
	if err != nil || string(reply) != "END\r\n" {
		t.Fatalf("after the flush get stale = %q %v, want a miss", reply, err)
	}
}

// A server that dies while a batch is in flight is failed over in one
// publication; the batch goes on without the moves that touched it.
func TestFailoverDuringABatch(t *testing.T) {
	r := newRig(t)
	l, _ := r.leader()
	view := NewView(r.st, map[string]TierInfo{"l2": {Shards: testShards, Members: addrs(r.servers)}})
	r.mustRound(l, 0)
	_, before := r.published()
	r.applyAll()
	if err := view.SetDrain(r.ctx, "l2", r.servers[1].Addr, true); err != nil {
		t.Fatal(err)
	}
	v := r.mustRound(l, time.Second)
	_, p := r.published()
	toDead := 0
	for _, mv := range p.Moves {
		if p.Members[mv.To].Addr == r.servers[3].Addr {
			toDead++
		}
	}
	// The rig's layout is fixed (fixedLayout), so this batch is the same
	// in every run: it must empty server 1 and send some of its shards to
	// server 3 and some elsewhere, or the failover below tests nothing.
	if p.Phase != Prepare || len(p.Moves) != r.ownedBy(before)[1] || toDead == 0 || toDead == len(p.Moves) {
		t.Fatalf("phase %q, %d moves for server 1's %d shards, %d onto server 3; want a prepare batch moving them all, some onto server 3 and some not",
			p.Phase, len(p.Moves), r.ownedBy(before)[1], toDead)
	}
	for _, a := range r.agents {
		a.Unreachable = []string{r.servers[3].Addr}
	}
	r.report()
	r.mustRound(l, 2*time.Second, 3)
	if got := r.mustRound(l, 4*time.Second, 3); got != v+1 {
		t.Fatalf("version %d, want %d", got, v+1)
	}
	_, q := r.published()
	if r.state(q, 3) != assign.Down || r.ownedBy(q)[3] != 0 {
		t.Fatalf("server 3: state %v, %d shards", r.state(q, 3), r.ownedBy(q)[3])
	}
	if q.Phase != Prepare || len(q.Moves) != len(p.Moves)-toDead {
		t.Fatalf("phase %q with %d moves; want prepare with the %d moves not onto server 3", q.Phase, len(q.Moves), len(p.Moves)-toDead)
	}
	for sh, o := range q.Owner {
		if st := q.Members[o].State; st != assign.Up && st != assign.Draining {
			t.Fatalf("shard %d owned by a %v server", sh, st)
		}
	}
}
