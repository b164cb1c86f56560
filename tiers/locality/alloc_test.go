package locality_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// inline is the executor of tests that drive the router from one
// goroutine: a resumed request runs at once.
type inline struct{}

func (inline) Run(_ int, fn func()) { fn() }

// syncDir answers every lookup at once with one location, and counts
// accesses the way a real directory must: without allocating.
type syncDir struct {
	loc           loccache.Location
	local, remote atomic.Uint64
	// servingUntil (Unix ns; 0: forever), read the way the location
	// service's Fenced reads it: one atomic load.
	servingUntil atomic.Int64
}

func (d *syncDir) Fenced(now time.Time) bool {
	u := d.servingUntil.Load()
	return u != 0 && now.UnixNano() >= u
}

func (d *syncDir) Resolve(_ string, _ bool, done func(loccache.Location, error)) { done(d.loc, nil) }

func (d *syncDir) Access(_ string, remote bool) {
	if remote {
		d.remote.Add(1)
	} else {
		d.local.Add(1)
	}
}

func (d *syncDir) Served(string) {}

// TestLocalHitAllocatesNothing: a get hit of a μ-shard key owned here
// (the steady state of locality routing) costs the rule match, one cache
// lookup and the access count, and no allocation; so does a key with no
// μ-shard.
func TestLocalHitAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	inner, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}})
	if err != nil {
		t.Fatal(err)
	}
	d := &syncDir{loc: loccache.Location{Owner: "a", Epoch: 1, State: loccache.Stable}}
	d.servingUntil.Store(time.Now().Add(time.Hour).UnixNano()) // the fence is checked, and open
	tier, err := locality.New(locality.Config{Region: "a"}, locality.Deps{Inner: inner, Rules: rules, Directory: d, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	done := func(*tiers.Op) {}
	op := &tiers.Op{Done: done}
	for _, key := range []string{"u:{42}:name", "plain"} {
		op.Req = tiers.Request{Kind: tiers.KindSet, Key: []byte(key), Value: []byte("0123456789")}
		tier.Do(op)
		if op.Res.Status != tiers.StatusStored {
			t.Fatalf("set %s: %v %v", key, op.Res.Status, op.Res.Err)
		}
		get := tiers.Request{Kind: tiers.KindGet, Key: []byte(key), WantValue: true, WantFlags: true}
		op.Req = get
		op.Res.Value = make([]byte, 0, 64)
		tier.Do(op) // warm: the location is cached, the name remembered
		n := testing.AllocsPerRun(1000, func() {
			op.Req = get
			op.Res.Reset()
			tier.Do(op)
			if op.Res.Status != tiers.StatusHit || string(op.Res.Value) != "0123456789" {
				t.Fatalf("get %s: %v %q", key, op.Res.Status, op.Res.Value)
			}
		})
		if n != 0 {
			t.Errorf("a local get hit of %s allocates %.1f times", key, n)
		}
	}
	if s := tier.Stats(); s.CacheMisses != 1 || s.Local < 1000 {
		t.Fatalf("%+v", s)
	}
}
