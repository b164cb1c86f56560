package layered

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
)

// fixture is a layering over two real embedded stores sharing a fake clock.
type fixture struct {
	t      *testing.T
	now    int64
	l1, l2 *embedded.Store
	tier   *Tier
	coins  []uint64 // the next values Rand returns; 0 promotes, max never does
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	f := &fixture{t: t, now: 1_700_000_000}
	clock := func() int64 { return f.now }
	var err error
	if f.l1, err = embedded.New(embedded.Config{MaxBytes: 16 << 20, Now: clock}); err != nil {
		t.Fatal(err)
	}
	if f.l2, err = embedded.New(embedded.Config{MaxBytes: 64 << 20, Now: clock}); err != nil {
		t.Fatal(err)
	}
	if cfg.Rand == nil {
		cfg.Rand = func() uint64 {
			if len(f.coins) == 0 {
				return ^uint64(0) // no promotion unless a test asks for one
			}
			c := f.coins[0]
			f.coins = f.coins[1:]
			return c
		}
	}
	if f.tier, err = New(cfg, f.l1, f.l2, inline{}); err != nil {
		t.Fatal(err)
	}
	return f
}

// inline is the Executor of tests that drive the tier from one goroutine:
// a resumed write runs at once.
type inline struct{}

func (inline) Run(_ int, fn func()) { fn() }

// TestNewNeedsExecutor: a layering without the event loops is refused
// when it is built, not found out when a delayed write has nowhere to run.
func TestNewNeedsExecutor(t *testing.T) {
	l2, _ := embedded.New(embedded.Config{})
	if _, err := New(Config{}, nil, l2, nil); err == nil {
		t.Fatal("New without an executor: no error")
	}
}

// do runs req through tier and returns the completed result.
func do(t *testing.T, tier tiers.Tier, req tiers.Request) tiers.Result {
	t.Helper()
	var op tiers.Op
	done := false
	op.Req = req
	op.Done = func(*tiers.Op) { done = true }
	tier.Do(&op)
	if !done {
		t.Fatalf("%v on %q did not complete synchronously", req.Kind, req.Key)
	}
	return op.Res
}

func get(key string) tiers.Request {
	return tiers.Request{Kind: tiers.KindGet, Key: []byte(key), WantValue: true, WantFlags: true}
}

func set(key, value string, ttl int64) tiers.Request {
	return tiers.Request{Kind: tiers.KindSet, Key: []byte(key), Value: []byte(value), TTL: ttl, ClientFlags: 7}
}

func ttlOf(t *testing.T, tier tiers.Tier, key string) (tiers.Status, int64) {
	t.Helper()
	r := do(t, tier, tiers.Request{Kind: tiers.KindGet, Key: []byte(key), WantTTL: true})
	return r.Status, r.TTL
}

func TestSetGoesToL2Only(t *testing.T) {
	f := newFixture(t, Config{Threshold: 32})
	if r := do(t, f.tier, set("k", "v1", 0)); r.Status != tiers.StatusStored {
		t.Fatalf("set: %v", r.Status)
	}
	if st, _ := ttlOf(t, f.l2, "k"); st != tiers.StatusHit {
		t.Errorf("L2 after set: %v, want hit", st)
	}
	if st, _ := ttlOf(t, f.l1, "k"); st != tiers.StatusMiss {
		t.Errorf("L1 after set: %v, want miss", st)
	}
}

func TestPromotionCopiesWithBoundedTTL(t *testing.T) {
	f := newFixture(t, Config{Threshold: 32, L1MaxTTL: 60 * time.Second})
	do(t, f.tier, set("short", "a", 10))  // L2 TTL below l1.max_ttl
	do(t, f.tier, set("forever", "b", 0)) // no expiry in L2
	do(t, f.tier, set("long", "c", 3600)) // L2 TTL above l1.max_ttl
	for _, k := range []string{"short", "forever", "long"} {
		f.coins = []uint64{0}
		r := do(t, f.tier, get(k))
		if r.Status != tiers.StatusHit || r.Level != 2 || !r.Promoted {
			t.Fatalf("%s: first get = %v level %d promoted %v, want an L2 hit that promotes", k, r.Status, r.Level, r.Promoted)
		}
		if r.ClientFlags != 7 {
			t.Errorf("%s: flags %d, want 7", k, r.ClientFlags)
		}
	}
	want := map[string]int64{"short": 10, "forever": 60, "long": 60}
	for k, ttl := range want {
		st, got := ttlOf(t, f.l1, k)
		if st != tiers.StatusHit || got != ttl {
			t.Errorf("L1 copy of %s: %v ttl %d, want hit ttl %d", k, st, got, ttl)
		}
	}
	r := do(t, f.tier, get("long"))
	if r.Level != 1 || string(r.Value) != "c" || r.ClientFlags != 7 {
		t.Errorf("second get of long: level %d value %q flags %d, want an L1 hit of c/7", r.Level, r.Value, r.ClientFlags)
	}
	s := f.tier.Stats()
	if s.PromotionsAttempted != 3 || s.PromotionsDone != 3 || s.L1Hits != 1 || s.L2Hits != 3 {
		t.Errorf("stats %+v", s)
	}
}

func TestPromotionExactCount(t *testing.T) {
	// With N = 4 and coins sweeping [0, 2^64) evenly, exactly one L2 hit in
	// four is promoted.
	var i uint64
	f := newFixture(t, Config{Threshold: 4, Rand: func() uint64 { i++; return (i % 4) << 62 }})
	for k := 0; k < 400; k++ {
		do(t, f.tier, set(keyN(k), "v", 0))
	}
	promoted := 0
	for k := 0; k < 400; k++ {
		if do(t, f.tier, get(keyN(k))).Promoted {
			promoted++
		}
	}
	if promoted != 100 {
		t.Errorf("promoted %d of 400 with N=4, want exactly 100", promoted)
	}
	if n := f.l1.Len(); n != 100 {
		t.Errorf("L1 holds %d items, want 100", n)
	}
}

func keyN(i int) string { return "key:" + string(rune('a'+i%26)) + ":" + itoa(i) }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

func TestWritesInvalidateL1(t *testing.T) {
	writes := []tiers.Request{
		set("k", "new", 0),
		{Kind: tiers.KindSet, Mode: tiers.ModeAppend, Key: []byte("k"), Value: []byte("+")},
		{Kind: tiers.KindDelete, Key: []byte("k")},
		{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("k"), Delta: 1},
		{Kind: tiers.KindGet, Key: []byte("k"), HasTTL: true, TTL: 100}, // touch
	}
	for _, w := range writes {
		f := newFixture(t, Config{Threshold: 1})
		do(t, f.tier, set("k", "1", 0))
		do(t, f.tier, get("k")) // N = 1: promoted
		if st, _ := ttlOf(t, f.l1, "k"); st != tiers.StatusHit {
			t.Fatalf("setup: L1 %v, want hit", st)
		}
		do(t, f.tier, w)
		if st, _ := ttlOf(t, f.l1, "k"); st != tiers.StatusMiss {
			t.Errorf("after %v mode %v: L1 still holds the key", w.Kind, w.Mode)
		}
	}
}

func TestAuthoritativeReadsSkipL1(t *testing.T) {
	f := newFixture(t, Config{Threshold: 1})
	do(t, f.tier, set("k", "v", 0))
	r := do(t, f.tier, tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), WantValue: true, WantCAS: true})
	if r.Status != tiers.StatusHit || r.CAS == 0 || r.Promoted {
		t.Fatalf("gets: %v cas %d promoted %v", r.Status, r.CAS, r.Promoted)
	}
	if st, _ := ttlOf(t, f.l1, "k"); st != tiers.StatusMiss {
		t.Error("gets promoted into L1")
	}
}

func TestSingleTier(t *testing.T) {
	l2, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tier, err := New(Config{}, nil, l2, inline{})
	if err != nil {
		t.Fatal(err)
	}
	do(t, tier, set("k", "v", 0))
	r := do(t, tier, get("k"))
	if r.Status != tiers.StatusHit || string(r.Value) != "v" || r.Level != 2 || r.Promoted {
		t.Errorf("single tier get: %+v", r)
	}
}

func TestFlushReachesBothTiers(t *testing.T) {
	f := newFixture(t, Config{Threshold: 1})
	do(t, f.tier, set("k", "v", 0))
	do(t, f.tier, get("k"))
	do(t, f.tier, tiers.Request{Kind: tiers.KindFlush})
	f.now++ // flush_all invalidates items stored up to the flush second
	for name, tier := range map[string]tiers.Tier{"L1": f.l1, "L2": f.l2} {
		if st, _ := ttlOf(t, tier, "k"); st != tiers.StatusMiss {
			t.Errorf("%s after flush_all: %v", name, st)
		}
	}
}

func TestL2ErrorReachesClient(t *testing.T) {
	f := newFixture(t, Config{Threshold: 1})
	tier, _ := New(Config{}, f.l1, failing{}, inline{})
	r := do(t, tier, get("k"))
	if r.Status != tiers.StatusError || r.Err == nil {
		t.Errorf("get over a failing L2: %v %v, want an error", r.Status, r.Err)
	}
}

// failing stands for an unreachable backend, which a user does run into.
type failing struct{ tiers.NoPhase }

func (failing) Do(op *tiers.Op) {
	op.Res.Status = tiers.StatusError
	op.Res.Err = errUnreachable
	op.Done(op)
}

type errString string

func (e errString) Error() string { return string(e) }

const errUnreachable = errString("backend unreachable")

var raceEnabled bool

func TestGetHitAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	f := newFixture(t, Config{Threshold: 1})
	do(t, f.tier, set("k", "value", 0))
	do(t, f.tier, get("k"))
	op := &tiers.Op{Req: get("k"), Done: func(*tiers.Op) {}}
	f.tier.Do(op) // warm the buffers
	allocs := testing.AllocsPerRun(1000, func() {
		op.Res.Reset()
		f.tier.Do(op)
	})
	if allocs != 0 {
		t.Errorf("L1 get hit through the layering: %.1f allocs, want 0", allocs)
	}
}

// TestPhases: with an L1, a cacheable read (two hops) and everything else
// are ordered apart; a single tier is one hop and needs no order. (The
// proxy skips ordering altogether when every tier answers within Do.)
func TestPhases(t *testing.T) {
	f := newFixture(t, Config{Threshold: 32})
	for _, c := range []struct {
		name string
		req  tiers.Request
		want uint8
	}{
		{"get", tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), WantValue: true}, 1},
		{"gets", tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), WantValue: true, WantCAS: true}, 2},
		{"touch", tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), HasTTL: true}, 2},
		{"set", tiers.Request{Kind: tiers.KindSet, Key: []byte("k")}, 2},
		{"delete", tiers.Request{Kind: tiers.KindDelete, Key: []byte("k")}, 2},
		{"flush_all", tiers.Request{Kind: tiers.KindFlush}, 2},
	} {
		if ph := f.tier.Phase(&c.req); ph != c.want {
			t.Errorf("L1 over L2, %s: phase %d, want %d", c.name, ph, c.want)
		}
	}
	single, _ := New(Config{}, nil, f.l2, inline{})
	for _, r := range []tiers.Request{{Kind: tiers.KindGet, Key: []byte("k"), WantValue: true}, {Kind: tiers.KindDelete, Key: []byte("k")}} {
		if ph := single.Phase(&r); ph != 0 {
			t.Errorf("single tier, kind %d: phase %d, want 0", r.Kind, ph)
		}
	}
}
