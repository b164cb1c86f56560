// Package gatetest is a tier whose operations wait until a test lets them
// go, so that a test can interleave the steps of concurrent operations
// exactly: Run executes one at the inner tier (the moment a server would),
// Deliver hands its result back (the moment its reply is read). Between
// the two, other operations may run and complete, as on separate
// connections. Tests drive it from one goroutine.
package gatetest

import (
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// Gate holds every operation given to it until the test moves it on.
type Gate struct {
	tiers.NoPhase
	inner tiers.Tier // answers within Do (an embedded store)
	q     []*Call
}

// Call is one held operation.
type Call struct {
	Op  *tiers.Op
	res tiers.Result
	ran bool
}

var _ tiers.Tier = (*Gate)(nil)

// New returns a gate in front of inner, which must answer within Do.
func New(inner tiers.Tier) *Gate { return &Gate{inner: inner} }

// Do holds op.
func (g *Gate) Do(op *tiers.Op) { g.q = append(g.q, &Call{Op: op}) }

// Take removes and returns the oldest held operation of kind on key
// (exactly the key the gate was given), failing t if there is none.
func (g *Gate) Take(t testing.TB, kind tiers.Kind, key string) *Call {
	t.Helper()
	for i, c := range g.q {
		if c.Op.Req.Kind == kind && string(c.Op.Req.Key) == key {
			g.q = append(g.q[:i], g.q[i+1:]...)
			return c
		}
	}
	t.Fatalf("no %v of %q held", kind, key)
	return nil
}

// Run executes c at the inner tier now and keeps its result for Deliver.
func (g *Gate) Run(c *Call) {
	var sub tiers.Op
	sub.Req = c.Op.Req
	sub.Done = func(*tiers.Op) {}
	g.inner.Do(&sub)
	c.res, c.ran = sub.Res, true
}

// Deliver completes c with its result, running it first if Run did not.
func (g *Gate) Deliver(c *Call) {
	if !c.ran {
		g.Run(c)
	}
	c.Op.Res = c.res
	c.Op.Done(c.Op)
}

// DeliverAll delivers every held operation in order, including those
// that the completions hold meanwhile, and reports how many.
func (g *Gate) DeliverAll() int {
	n := 0
	for len(g.q) > 0 {
		c := g.q[0]
		g.q = g.q[1:]
		g.Deliver(c)
		n++
	}
	return n
}

// Settle delivers everything the gates hold, round after round, until
// done reports true; it fails t when done is false and nothing is held.
func Settle(t testing.TB, done func() bool, gates ...*Gate) {
	t.Helper()
	for !done() {
		n := 0
		for _, g := range gates {
			n += g.DeliverAll()
		}
		if n == 0 {
			t.Fatal("waiting on nothing the gates hold")
		}
	}
}
