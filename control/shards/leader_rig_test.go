package shards

import (
	"context"
	"fmt"
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

func addrs(ss []shardmap.Server) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Addr
	}
	return out
}
