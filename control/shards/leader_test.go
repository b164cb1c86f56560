package shards

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

const testShards = 64

// rig is one tier of four real memcached servers, an in-memory store, two
// agents' rows written by the test (it plays the strata) and a leader
// driven round by round on a fake clock.
type rig struct {
	t       *testing.T
	ctx     context.Context
	mem     *store.Memory
	st      *store.MemoryClient
	mc      []*memcachedtest.Server
	servers []shardmap.Server
	cfg     LeaderConfig
	now     time.Time
	agents  map[string]*Report
	lease   store.LeaseID
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, ctx: context.Background(), mem: store.NewMemory(store.MemoryOptions{}), now: time.Unix(1_000_000, 0)}
	r.st = r.mem.Connect()
	t.Cleanup(func() { _ = r.st.Close() })
	for i := 0; i < 4; i++ {
		s := memcachedtest.Start(t)
		r.mc = append(r.mc, s)
		r.servers = append(r.servers, shardmap.Server{Addr: s.Addr, Weight: 1})
	}
	r.cfg = LeaderConfig{Tier: "l2", Shards: testShards, Members: r.servers, Initial: fixedLayout(t, r.servers),
		Detection: 2 * time.Second, Rebalance: time.Hour, Grace: 5 * time.Second, SettleHold: 3 * time.Second, Seed: 1}
	sess, err := r.st.NewSession(r.ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	r.lease = sess.Lease()
	r.agents = map[string]*Report{"a": {ID: "a"}, "b": {ID: "b"}}
	r.report()
	return r
}

// fixedLayout is the rig's initial map: a rendezvous map computed over
// stand-in names, then given the real servers by index. The servers'
// ports come from the kernel, so a map hashed from their addresses would
// start every run from a different layout, and the leader, a pure
// function of its inputs, would plan a different batch each time. The
// leader takes Initial as given, so any layout exercises it; this one is
// the same in every run, and as uneven as a real rendezvous map.
func fixedLayout(t *testing.T, servers []shardmap.Server) *shardmap.Map {
	t.Helper()
	names := make([]shardmap.Server, len(servers))
	for i, s := range servers {
		names[i] = shardmap.Server{Addr: fmt.Sprintf("server-%d:11211", i), Weight: s.Weight}
	}
	layout, err := shardmap.Rendezvous(7, testShards, names)
	if err != nil {
		t.Fatal(err)
	}
	owner := make([]int, testShards)
	for sh := range owner {
		owner[sh] = layout.Owner(sh)
	}
	m, err := shardmap.New(0, servers, owner)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// leader campaigns on its own client and session.
func (r *rig) leader() (*Leader, store.Session) {
	c := r.mem.Connect()
	r.t.Cleanup(func() { _ = c.Close() })
	sess, err := c.NewSession(r.ctx, 3600)
	if err != nil {
		r.t.Fatal(err)
	}
	lead, err := c.Campaign(r.ctx, sess, ElectionName("l2"), "test")
	if err != nil {
		r.t.Fatal(err)
	}
	l, err := NewLeader(r.cfg, c, lead, Wire{Timeout: 2 * time.Second})
	if err != nil {
		r.t.Fatal(err)
	}
	return l, sess
}

func (r *rig) report() {
	for _, a := range r.agents {
		if err := PutReport(r.ctx, r.st, "l2", *a, r.lease); err != nil {
			r.t.Fatal(err)
		}
	}
}

// applyAll makes both agents report the stored version as applied.
func (r *rig) applyAll() {
	v, _ := r.published()
	for _, a := range r.agents {
		a.Applied = v
	}
	r.report()
}

// round runs one leader round at r.now + at with the given servers (by
// index) failing the leader's probe.
func (r *rig) round(l *Leader, at time.Duration, failing ...int) (uint64, error) {
	ob := Observation{Now: r.now.Add(at), Probe: map[string]bool{}}
	for _, s := range r.servers {
		ob.Probe[s.Addr] = true
	}
	for _, i := range failing {
		ob.Probe[r.servers[i].Addr] = false
	}
	return l.Round(r.ctx, ob)
}

func (r *rig) mustRound(l *Leader, at time.Duration, failing ...int) uint64 {
	r.t.Helper()
	v, err := r.round(l, at, failing...)
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

func (r *rig) published() (uint64, *Published) {
	r.t.Helper()
	cur, err := store.ReadVersioned(r.ctx, r.st, mapKey("l2"))
	if err != nil {
		r.t.Fatal(err)
	}
	if cur.Version == 0 {
		return 0, nil
	}
	p, err := Decode(cur.Payload, testShards)
	if err != nil {
		r.t.Fatal(err)
	}
	return cur.Version, p
}

// ownedBy counts the shards each configured server owns in p.
func (r *rig) ownedBy(p *Published) []int {
	c := make([]int, len(r.servers))
	for _, o := range p.Owner {
		c[r.index(p.Members[o].Addr)]++
	}
	return c
}

func (r *rig) index(addr string) int {
	for i, s := range r.servers {
		if s.Addr == addr {
			return i
		}
	}
	r.t.Fatalf("%s is not a configured server", addr)
	return -1
}

func (r *rig) state(p *Published, i int) assign.State {
	return p.Members[p.index(r.servers[i].Addr)].State
}

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

func addrs(ss []shardmap.Server) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Addr
	}
	return out
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
