package handoff

import (
	"fmt"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// The race tests run a client's write and a racing fill, each a Machine,
// against a small model of two memcached servers (a move's source A and
// destination B), in every interleaving of their sub-requests, and check
// the invariant: once the write is acknowledged, a read misses or returns
// the write's value, never the source's older one.

// item is a key's item at one end of the model.
type item struct {
	val string
	cas uint64
	ph  bool // a lease's placeholder, not a value
}

// model is the key's item at A (source) and B (destination); nil when
// absent. memcached runs each sub-request atomically, so one apply is one
// step of an interleaving.
type model struct {
	at  [2]*item // indexed by the model ends below
	cas uint64
}

const (
	atA = 0 // the source: fills read here
	atB = 1 // the destination: fills store here
)

func (md *model) next() uint64 { md.cas++; return md.cas }

// apply runs r at end e as memcached would and returns the answer.
func (md *model) apply(e int, r *tiers.Request) tiers.Result {
	it := md.at[e]
	switch {
	case r.Kind == tiers.KindDelete:
		if it == nil || (r.HasCompareCAS && it.cas != r.CompareCAS) {
			return tiers.Result{Status: tiers.StatusNotFound}
		}
		md.at[e] = nil
		return tiers.Result{Status: tiers.StatusStored}
	case r.Kind == tiers.KindSet && r.HasCompareCAS:
		switch {
		case it == nil:
			return tiers.Result{Status: tiers.StatusNotFound}
		case it.cas != r.CompareCAS:
			return tiers.Result{Status: tiers.StatusExists}
		}
		md.at[e] = &item{val: string(r.Value), cas: md.next()}
		return tiers.Result{Status: tiers.StatusStored, CAS: md.at[e].cas}
	case r.Kind == tiers.KindSet:
		// A negative TTL stores an item that has already expired: for
		// every later request it is as if the key were deleted.
		md.at[e] = &item{val: string(r.Value), cas: md.next()}
		if r.TTL < 0 {
			md.at[e] = nil
		}
		return tiers.Result{Status: tiers.StatusStored}
	case r.Kind == tiers.KindGet && r.Vivify:
		switch {
		case it == nil:
			md.at[e] = &item{ph: true, cas: md.next()}
			return tiers.Result{Status: tiers.StatusHit, Win: true, CAS: md.at[e].cas}
		case it.ph:
			return tiers.Result{Status: tiers.StatusHit, AlreadyWon: true, CAS: it.cas}
		}
		return tiers.Result{Status: tiers.StatusHit, Value: []byte(it.val), CAS: it.cas, TTL: 60}
	case r.Kind == tiers.KindGet:
		if it == nil || it.ph {
			return tiers.Result{Status: tiers.StatusMiss}
		}
		return tiers.Result{Status: tiers.StatusHit, Value: []byte(it.val), CAS: it.cas, TTL: 60}
	}
	panic(fmt.Sprintf("model: unexpected %+v", r))
}

// runner is one Machine with its client and where its ends are.
type runner struct {
	m       Machine
	client  tiers.Op
	sub     tiers.Request
	a       Action
	primary int // the model end of AtPrimary; the other end is 1-primary
}

func (r *runner) done() bool { return r.a.Step == Done }

// step sends the sub-request in flight and feeds the answer back.
func (r *runner) step(md *model) {
	e := r.primary
	if r.a.End == AtOther {
		e = 1 - r.primary
	}
	res := md.apply(e, &r.sub)
	r.a = r.m.Next(&res, func() bool { return true })
}

// interleavings calls f with every merge of n steps of one runner and m
// of another, as a sequence of choices (true: the first runner's turn).
func interleavings(n, m int, prefix []bool, f func([]bool)) {
	if n == 0 && m == 0 {
		f(prefix)
		return
	}
	if n > 0 {
		interleavings(n-1, m, append(prefix, true), f)
	}
	if m > 0 {
		interleavings(n, m-1, append(prefix, false), f)
	}
}

// raceCase is a write at primary end wp (A in prepare or for a replica's
// owner, B in handoff, settle or a region's Migrating) racing a fill of B
// from A.
type raceCase struct {
	name  string
	rules Rules
	wp    int
	write tiers.Request
	// wantMiss: after the write a read misses; else it reads "new".
	wantMiss bool
}

var (
	raceDelete  = tiers.Request{Kind: tiers.KindDelete}
	raceSet     = tiers.Request{Kind: tiers.KindSet, Value: []byte("new")}
	raceExpired = tiers.Request{Kind: tiers.KindSet, Value: []byte("new"), TTL: -1}
)

func raceCases() []raceCase {
	var cs []raceCase
	for _, rc := range []struct {
		name  string
		rules Rules
		wp    int
	}{
		{"move prepare", moves, atA},
		{"move handoff", moves, atB},
		{"replica", replicas, atA},
		{"region prepare", regions, atA},
		{"region migrating", regions, atB},
	} {
		cs = append(cs,
			raceCase{rc.name + ": delete", rc.rules, rc.wp, raceDelete, true},
			raceCase{rc.name + ": set", rc.rules, rc.wp, raceSet, false},
			raceCase{rc.name + ": set already expired", rc.rules, rc.wp, raceExpired, true},
		)
	}
	return cs
}

// TestWriteRacingFill: in no interleaving of a write and a fill does a
// read after the write's acknowledgement return the source's old value.
func TestWriteRacingFill(t *testing.T) {
	for _, c := range raceCases() {
		t.Run(c.name, func(t *testing.T) {
			// A write has two steps, a fill at most three.
			steps := func(order []bool) (md *model, w, f *runner) {
				md = &model{}
				md.at[atA] = &item{val: "old", cas: md.next()}
				w = &runner{primary: c.wp, client: tiers.Op{Req: c.write}}
				w.client.Req.Key = []byte("k")
				w.m.Init(&c.rules, &w.client, w.client.Req.Key, &w.sub)
				source := AtOther
				if c.wp == atA {
					source = AtPrimary
				}
				w.a = w.m.Write(1, source)
				f = &runner{primary: atB, client: tiers.Op{Req: get}}
				f.client.Req.Key = []byte("k")
				f.m.Init(&c.rules, &f.client, f.client.Req.Key, &f.sub)
				f.a = f.m.Fill()
				for _, first := range order {
					r := f
					if first {
						r = w
					}
					if !r.done() {
						r.step(md)
					}
				}
				return md, w, f
			}
			interleavings(2, 3, nil, func(order []bool) {
				md, w, _ := steps(order)
				if w.client.Res.Status == tiers.StatusError {
					t.Fatalf("%v: the write failed: %v", order, w.client.Res.Err)
				}
				// A read after the acknowledgement: a fill of its own.
				after := &runner{primary: atB, client: tiers.Op{Req: get}}
				after.client.Req.Key = []byte("k")
				after.m.Init(&c.rules, &after.client, after.client.Req.Key, &after.sub)
				after.a = after.m.Fill()
				for !after.done() {
					after.step(md)
				}
				got := result(&after.client.Res)
				ok := got == "miss" || (!c.wantMiss && after.client.Res.Status == tiers.StatusHit && string(after.client.Res.Value) == "new")
				if !ok {
					t.Errorf("interleaving %s: a read after the acknowledged write got %s", trace(order), got)
				}
			})
		})
	}
}

// trace spells an interleaving: w for a step of the write, f for the fill.
func trace(order []bool) string {
	b := make([]byte, len(order))
	for i, w := range order {
		b[i] = 'f'
		if w {
			b[i] = 'w'
		}
	}
	return string(b)
}
