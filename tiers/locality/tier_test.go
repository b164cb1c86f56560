package locality

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/handoff"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

func TestClampTTL(t *testing.T) {
	const maxTTL, now = 100, 1_800_000_000
	cases := []struct{ in, want int64 }{
		{0, 100},    // never → max_ttl
		{-1, -1},    // already expired stays so
		{50, 50},    // shorter: kept
		{100, 100},  // at the bound
		{5000, 100}, // longer: clamped
		{handoff.MaxRelativeTTL, 100},
		{now + 50, 50},    // absolute, near
		{now + 5000, 100}, // absolute, far
		{now - 10, -1},    // absolute, past
	}
	for _, c := range cases {
		if got := clampTTL(c.in, maxTTL, now); got != c.want {
			t.Errorf("clampTTL(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

// phased is an inner tier with the layering's phases.
type phased struct{ l1 bool }

func (phased) Do(op *tiers.Op) { op.Done(op) }
func (p phased) Phase(r *tiers.Request) uint8 {
	if !p.l1 {
		return 0
	}
	if r.Kind == tiers.KindGet && !r.WantCAS {
		return 1
	}
	return 2
}

// inline is the executor of tests that drive the router from one
// goroutine: a resumed request runs at once.
type inline struct{}

func (inline) Run(_ int, fn func()) { fn() }

type nopDir struct{}

func (nopDir) Resolve(string, bool, func(loccache.Location, error)) {}
func (nopDir) Access(string, bool)                                  {}
func (nopDir) Served(string)                                        {}
func (nopDir) Fenced(time.Time) bool                                { return false }

func TestPhase(t *testing.T) {
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	get := &tiers.Request{Kind: tiers.KindGet, Key: []byte("u:{1}")}
	gets := &tiers.Request{Kind: tiers.KindGet, Key: []byte("u:{1}"), WantCAS: true}
	touch := &tiers.Request{Kind: tiers.KindGet, Key: []byte("u:{1}"), HasTTL: true}
	set := &tiers.Request{Kind: tiers.KindSet, Key: []byte("u:{1}")}
	plainGet := &tiers.Request{Kind: tiers.KindGet, Key: []byte("x")}
	const x = tiers.PhaseExclusive
	for _, c := range []struct {
		l1   bool
		r    *tiers.Request
		want uint8
	}{
		// Without an L1 the inner tier needs no order, but a μ-shard
		// write is exclusive and reads go together.
		{false, get, 1}, {false, gets, 1}, {false, touch, x}, {false, set, x}, {false, plainGet, 0},
		// With one, reads keep the inner tier's split.
		{true, get, 1}, {true, gets, 2}, {true, set, x}, {true, plainGet, 1},
	} {
		tr, err := New(Config{Region: "a"}, Deps{Inner: phased{c.l1}, Rules: rules, Directory: nopDir{}, Loops: inline{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Phase(c.r); got != c.want {
			t.Errorf("l1 %v, %+v: phase %d, want %d", c.l1, *c.r, got, c.want)
		}
	}
}

func TestConfigDefaultsAndBounds(t *testing.T) {
	c := Config{Region: "a", MaxTTL: 5 * time.Second}
	if err := c.validate(); err != nil || c.FillLease != 5*time.Second || c.ForwardTimeout != time.Second {
		t.Fatalf("%+v %v", c, err)
	}
	for _, bad := range []Config{
		{},
		{Region: "a", MaxTTL: 1500 * time.Millisecond},
		{Region: "a", MaxTTL: 31 * 24 * time.Hour},
		{Region: "a", MaxTTL: time.Minute, FillLease: 2 * time.Minute},
		{Region: "a", ForwardTimeout: time.Hour},
	} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestSettleWindow: a μ-shard seen migrating here keeps a window open
// from then until a fill lease after it is seen Stable; a move elsewhere
// closes it; the steady path is restored once none is open.
func TestSettleWindow(t *testing.T) {
	rules, _ := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	now := time.Unix(1_800_000_000, 0)
	tr, err := New(Config{Region: "a", FillLease: 10 * time.Second, Now: func() time.Time { return now }},
		Deps{Inner: phased{}, Rules: rules, Directory: nopDir{}, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	update := func(loc loccache.Location) {
		done := false
		tr.Update([]Change{{Name: "u: 1", Loc: loc}}, func() { done = true })
		if !done {
			t.Fatal("Update with no loop did not call done")
		}
	}
	src := func(epoch uint64) string {
		s, ok := tr.settle.source("u: 1", epoch, now)
		if !ok {
			return ""
		}
		return s
	}
	update(loccache.Location{Owner: "a", Epoch: 2, State: loccache.Prepare, Source: "b"})
	if tr.settle.open.Load() != 0 {
		t.Fatal("Prepare opened a window: we do not serve yet")
	}
	update(loccache.Location{Owner: "a", Epoch: 2, State: loccache.Migrating, Source: "b"})
	if src(2) != "b" {
		t.Fatal("no window while migrating here")
	}
	update(loccache.Location{Owner: "a", Epoch: 2, State: loccache.Stable})
	now = now.Add(9 * time.Second)
	if src(2) != "b" {
		t.Fatal("the window closed before a fill lease")
	}
	now = now.Add(time.Second)
	if src(2) != "" || tr.settle.open.Load() != 0 {
		t.Fatal("the window outlived the fill lease")
	}
	update(loccache.Location{Owner: "a", Epoch: 4, State: loccache.Migrating, Source: "c"})
	update(loccache.Location{Owner: "d", Epoch: 5, State: loccache.Prepare, Source: "a"})
	if tr.settle.open.Load() != 0 {
		t.Fatal("a move away left the window open")
	}
}

// TestNewNeedsLoops: the router resumes resolved requests on their loops,
// so it is refused without them when it is built.
func TestNewNeedsLoops(t *testing.T) {
	if _, err := New(Config{Region: "a"}, Deps{Inner: phased{}, Directory: nopDir{}}); err == nil {
		t.Fatal("New without loops: no error")
	}
}
