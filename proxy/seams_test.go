package proxy

import (
	"strconv"
	"testing"

	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/memcached"
)

// phased asks for phase 2 on every request, like the layering's writes.
type phased struct{}

var _ tiers.Tier = phased{}

func (phased) Do(op *tiers.Op)            { op.Done(op) }
func (phased) Phase(*tiers.Request) uint8 { return 2 }

// TestOrderingOnlyWithPools: the tier's phases matter only when some tier
// can answer after Do returns, which only the pools (and other users)
// built on the server's loops do; without them the server does no
// ordering work and schedules no flushes.
func TestOrderingOnlyWithPools(t *testing.T) {
	set := &protocol.Command{Reqs: []tiers.Request{{Kind: tiers.KindSet, Key: []byte("k")}}}
	sync, err := New(Config{Listen: "127.0.0.1:0"}, phased{}, newLoops(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	if ph := sync.phaseOf(set); ph != 0 || sync.async {
		t.Errorf("without pools: phase %d, async %v; want 0, false", ph, sync.async)
	}
	loops := newLoops(t, 0)
	p, err := memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: "127.0.0.1:1"}}}, loops)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	withPool, err := New(Config{Listen: "127.0.0.1:0"}, phased{}, loops)
	if err != nil {
		t.Fatal(err)
	}
	if ph := withPool.phaseOf(set); ph != 2 || !withPool.async {
		t.Errorf("with a pool: phase %d, async %v; want 2, true", ph, withPool.async)
	}
	if ph := withPool.phaseOf(&protocol.Command{}); ph != 0 {
		t.Errorf("a command without requests: phase %d, want 0", ph)
	}
}

// byKind phases reads 1 and everything else exclusive, as the locality
// router does for μ-shard keys.
type byKind struct{}

func (byKind) Do(op *tiers.Op) { op.Done(op) }
func (byKind) Phase(r *tiers.Request) uint8 {
	if r.Kind == tiers.KindGet {
		return 1
	}
	return tiers.PhaseExclusive
}

type idleUser struct{}

func (idleUser) Start()        {}
func (idleUser) FlushLoop(int) {}

// TestExclusivePhase: an exclusive request waits for every request of its
// key in flight, of any phase, and every later request of its key waits
// for it; reads of one key wait for each other, reads of other keys go
// together (even in one bucket); other keys are not held.
func TestExclusivePhase(t *testing.T) {
	loops := newLoops(t, 0)
	if err := loops.Join(idleUser{}); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Listen: "127.0.0.1:0"}, byKind{}, loops)
	if err != nil {
		t.Fatal(err)
	}
	cmd := func(kind tiers.Kind, key string) *slot {
		return &slot{cmd: protocol.Command{Reqs: []tiers.Request{{Kind: kind, Key: []byte(key)}}}}
	}
	k, other := "k", "other"
	if phaseBucket([]byte(k)) == phaseBucket([]byte(other)) {
		t.Fatal("pick keys in different buckets")
	}
	neighbour := "" // a key of k's bucket
	for i := 0; neighbour == ""; i++ {
		if c := "n" + strconv.Itoa(i); phaseBucket([]byte(c)) == phaseBucket([]byte(k)) {
			neighbour = c
		}
	}
	// inFlight is a connection with one request of kind for key issued
	// and not complete.
	inFlight := func(kind tiers.Kind, key string) *conn {
		q := cmd(kind, key)
		q.phase, q.pending = byKind{}.Phase(&q.cmd.Reqs[0]), 1
		cn := &conn{srv: srv, work: &work{inflight: new(phaseCounts), queue: []*slot{q}}}
		cn.inflight[q.phase-1][phaseBucket([]byte(key))]++
		cn.inPhase[q.phase-1]++
		return cn
	}
	cases := []struct {
		name   string
		cn     *conn
		next   *slot
		issued bool
	}{
		{"read after read", inFlight(tiers.KindGet, k), cmd(tiers.KindGet, k), false},
		{"read after a read of its bucket", inFlight(tiers.KindGet, neighbour), cmd(tiers.KindGet, k), true},
		{"write after read", inFlight(tiers.KindGet, k), cmd(tiers.KindSet, k), false},
		{"write after write", inFlight(tiers.KindSet, k), cmd(tiers.KindSet, k), false},
		{"read after write", inFlight(tiers.KindSet, k), cmd(tiers.KindGet, k), false},
		{"write of another key", inFlight(tiers.KindSet, k), cmd(tiers.KindSet, other), true},
		{"read of another key", inFlight(tiers.KindGet, k), cmd(tiers.KindDelete, other), true},
	}
	for _, c := range cases {
		c.cn.enqueue(c.next)
		if got := c.cn.mayIssue(c.next); got != c.issued {
			t.Errorf("%s: issued %v, want %v", c.name, got, c.issued)
		}
	}
}

// reporting is a loop user that says whether it batched anything.
type reporting struct {
	idleUser
	batched bool
}

func (r *reporting) Batched(int) bool { return r.batched }

// TestRoundOnlyWhenDue: a flush round is scheduled only when some user
// batched something on the loop; a user that cannot tell always gets its
// round.
func TestRoundOnlyWhenDue(t *testing.T) {
	a, b := &reporting{}, &reporting{}
	s := &Server{users: []memcached.User{a, b}}
	if s.roundDue(0) {
		t.Error("a round with nothing batched")
	}
	b.batched = true
	if !s.roundDue(0) {
		t.Error("no round with a request batched")
	}
	s.users = append(s.users, idleUser{})
	b.batched = false
	if !s.roundDue(0) {
		t.Error("no round for a user that cannot tell")
	}
}
