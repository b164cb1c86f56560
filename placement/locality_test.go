package placement

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestDecayedHalves(t *testing.T) {
	const h = time.Hour
	var d Decayed
	d = d.Add(t0, 8, h)
	if got := d.Value(t0.Add(2*h), h); got != 2 {
		t.Fatalf("8 after two half-lives: %v, want 2", got)
	}
	if got := d.Value(t0.Add(-h), h); got != 8 {
		t.Fatalf("a count read before its time grew or shrank: %v", got)
	}
	d = d.Add(t0.Add(h), 4, h) // 8 decays to 4, plus 4
	if d.N != 8 || !d.At.Equal(t0.Add(h)) {
		t.Fatalf("after a later batch: %+v, want 8 at t0+1h", d)
	}
	d = d.Add(t0, 2, h) // a late batch, stated as of t0: worth 1 at t0+1h
	if d.N != 9 || !d.At.Equal(t0.Add(h)) {
		t.Fatalf("after a late batch: %+v, want 9 at t0+1h", d)
	}
}

// TestDecayedOrderInsensitive: batches merged in any order give the same
// value, which is what lets proxies ship them without coordination.
func TestDecayedOrderInsensitive(t *testing.T) {
	const h = time.Hour
	batches := []Decayed{{16, t0}, {4, t0.Add(3 * h)}, {8, t0.Add(h)}, {2, t0.Add(2 * h)}}
	want := 16.0/8 + 4 + 8.0/4 + 2.0/2 // all as of t0+3h
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}} {
		var d Decayed
		for _, i := range order {
			d = d.Merge(batches[i], h)
		}
		if got := d.Value(t0.Add(3*h), h); got != want {
			t.Errorf("order %v: %v, want %v", order, got, want)
		}
	}
}

func TestBucket(t *testing.T) {
	var b Bucket
	var ok bool
	for i := 0; i < 3; i++ { // the zero bucket is full: burst 3
		if b, ok = b.Take(t0, 0.5, 3); !ok {
			t.Fatalf("take %d of a full bucket failed", i)
		}
	}
	if b, ok = b.Take(t0, 0.5, 3); ok {
		t.Fatal("took a fourth token at once")
	}
	if b, ok = b.Take(t0.Add(time.Second), 0.5, 3); ok {
		t.Fatal("half a token was taken")
	}
	if b, ok = b.Take(t0.Add(2*time.Second), 0.5, 3); !ok {
		t.Fatal("a whole token after 2s at 0.5/s was refused")
	}
	if b, _ = b.Take(t0.Add(time.Hour), 0.5, 3); b.Tokens != 2 {
		t.Fatalf("refill is not capped at burst: %v tokens after one take", b.Tokens)
	}
	if b2, _ := b.Take(t0, 0.5, 3); b2.Tokens != 1 || !b2.At.Equal(b.At) {
		t.Fatalf("a clock that went back refilled: %+v", b2)
	}
}

func TestPolicyValidate(t *testing.T) {
	p, err := LocalityPolicy{}.Validated()
	if err != nil || p.HalfLife != DefaultHalfLife || p.MinInterval != DefaultMinInterval ||
		p.MigrateAfter != DefaultMigrateAfter || p.Rate != DefaultRate || p.Burst != DefaultBurst || p.Evidence != DefaultEvidence {
		t.Fatalf("defaults: %+v, %v", p, err)
	}
	bad := []struct {
		p     LocalityPolicy
		field string
	}{
		{LocalityPolicy{HalfLife: time.Millisecond}, "HalfLife"},
		{LocalityPolicy{MigrateAfter: -1}, "MigrateAfter"},
		{LocalityPolicy{MinInterval: time.Hour, MaxTTL: 2 * time.Hour}, "MinInterval"},
		{LocalityPolicy{Rate: -1}, "Rate"},
		{LocalityPolicy{Rate: 2e6}, "Rate"},
		{LocalityPolicy{Burst: 0.5}, "Burst"},
		{LocalityPolicy{Evidence: 0.9}, "Evidence"},
		{LocalityPolicy{Evidence: 1e4}, "Evidence"},
	}
	for _, b := range bad {
		_, err := b.p.Validated()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != b.field {
			t.Errorf("%+v: %v, want an error about %s", b.p, err, b.field)
		}
	}
	// Validate takes the policy as it is: a zero Rate is refused, not
	// defaulted, and every refused field is reported.
	err = LocalityPolicy{HalfLife: time.Hour, MinInterval: time.Hour, MaxTTL: 2 * time.Hour}.Validate()
	for _, want := range []string{"MinInterval: 1h is below max_ttl (2h)", "Rate: 0 is out of range", "Burst: 0 is out of range"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
	if err := DefaultLocalityPolicy().Validate(); err != nil {
		t.Errorf("the defaults are refused: %v", err)
	}
}

// decideCase is one exact-outcome case of Decide.
type decideCase struct {
	name    string
	regions []RegionState
	m       MuShardState
	b       Bucket
	seed    uint64
	want    Decision
}

func TestDecide(t *testing.T) {
	p, err := LocalityPolicy{HalfLife: time.Hour, MigrateAfter: 10 * time.Minute, MinInterval: 6 * time.Hour, Rate: 1, Burst: 2}.Validated()
	if err != nil {
		t.Fatal(err)
	}
	abc := []RegionState{{Name: "a", Spare: 1}, {Name: "b", Spare: 1}, {Name: "c", Spare: 1}}
	now := t0.Add(24 * time.Hour)
	at := func(n float64) Decayed { return Decayed{N: n, At: now} }
	visits := func(n float64) Visits { return Visits{Decayed: at(n), Last: now} }
	ready := MuShardState{Owner: "a", LastMigration: t0, FirstRemote: now.Add(-time.Hour),
		Counters: map[string]Decayed{"a": at(10), "b": at(30), "c": at(20)},
		Visits:   map[string]Visits{"b": visits(2), "c": visits(2)}}
	with := func(f func(*MuShardState)) MuShardState {
		m := ready
		m.Counters = map[string]Decayed{}
		for k, v := range ready.Counters {
			m.Counters[k] = v
		}
		m.Visits = map[string]Visits{}
		for k, v := range ready.Visits {
			m.Visits[k] = v
		}
		f(&m)
		return m
	}
	empty := Bucket{Tokens: 0.5, At: now}
	cases := []decideCase{
		{name: "the best region wins", m: ready, want: Decision{true, "b", ReasonBetter}},
		{name: "a recent migration holds it", m: with(func(m *MuShardState) { m.LastMigration = now.Add(-time.Hour) }),
			want: Decision{Reason: ReasonMinInterval}},
		{name: "min_interval is inclusive", m: with(func(m *MuShardState) { m.LastMigration = now.Add(-6 * time.Hour) }),
			want: Decision{true, "b", ReasonBetter}},
		{name: "no remote access", m: with(func(m *MuShardState) { m.FirstRemote = time.Time{} }),
			want: Decision{Reason: ReasonNoRemote}},
		{name: "migrate_after not yet", m: with(func(m *MuShardState) { m.FirstRemote = now.Add(-9 * time.Minute) }),
			want: Decision{Reason: ReasonWaiting}},
		// A return does not wait migrate_after; any other move still does.
		{name: "a return before migrate_after", m: with(func(m *MuShardState) { m.FirstRemote, m.Left = now.Add(-9*time.Minute), "c" }),
			want: Decision{true, "c", ReasonBetter}},
		{name: "before migrate_after, the region left scoring under the owner", m: with(func(m *MuShardState) {
			m.FirstRemote, m.Left, m.Counters["c"] = now.Add(-9*time.Minute), "c", at(9)
		}), want: Decision{Reason: ReasonWaiting}},
		{name: "owner scores best", m: with(func(m *MuShardState) { m.Counters["a"] = at(31) }),
			want: Decision{Reason: ReasonOwnerBest}},
		{name: "a tie with the owner stays", m: with(func(m *MuShardState) { m.Counters["a"] = at(30) }),
			want: Decision{Reason: ReasonOwnerBest}},
		// Evidence 1.5: the best must score above 1.5 × the owner.
		{name: "more than the owner is not enough", m: with(func(m *MuShardState) { m.Counters["a"] = at(20.5) }),
			want: Decision{Reason: ReasonOwnerBest}},
		{name: "evidence is exclusive", m: with(func(m *MuShardState) { m.Counters["a"] = at(20) }),
			want: Decision{Reason: ReasonOwnerBest}},
		{name: "1.5 × the owner and a little", m: with(func(m *MuShardState) { m.Counters["a"] = at(19.9) }),
			want: Decision{true, "b", ReasonBetter}},
		{name: "one stray read against a cold owner", m: with(func(m *MuShardState) {
			m.Counters = map[string]Decayed{"a": at(0.7), "c": at(1)}
		}), want: Decision{Reason: ReasonOwnerBest}},
		// MinEvidence: one read, however cold the owner, moves nothing.
		{name: "one fresh read against an owner that scores nothing", m: with(func(m *MuShardState) {
			m.Counters = map[string]Decayed{"c": at(1)}
		}), want: Decision{Reason: ReasonOwnerBest}},
		{name: "two reads against a cold owner", m: with(func(m *MuShardState) {
			m.Counters = map[string]Decayed{"a": at(0.5), "c": at(1.8)}
		}), want: Decision{true, "c", ReasonBetter}},
		// MinEvidence in visits: a read that missed and its fill are two
		// accesses but one visit.
		{name: "a read and its fill against a cold owner", m: with(func(m *MuShardState) {
			m.Counters, m.Visits = map[string]Decayed{"a": at(0.5), "c": at(1.8)}, map[string]Visits{"c": visits(1)}
		}), want: Decision{Reason: ReasonOwnerBest}},
		{name: "a region with accesses and no visit", m: with(func(m *MuShardState) { delete(m.Visits, "b") }),
			want: Decision{true, "c", ReasonBetter}},
		{name: "visits are decayed too", m: with(func(m *MuShardState) {
			m.Visits["b"] = Visits{Decayed: Decayed{N: 2, At: now.Add(-time.Hour)}, Last: now.Add(-time.Hour)} // 1 now
		}), want: Decision{true, "c", ReasonBetter}},
		// A pair that shifts waives MinEvidence; one that holds moves no claim.
		{name: "one visit while its pair shifts", m: with(func(m *MuShardState) {
			m.Visits["b"], m.Pairs = visits(1), map[string]PairState{"b": PairShifting}
		}), want: Decision{true, "b", ReasonBetter}},
		{name: "one visit while another pair shifts", m: with(func(m *MuShardState) {
			m.Visits["b"], m.Pairs = visits(1), map[string]PairState{"c": PairShifting}
		}), want: Decision{true, "c", ReasonBetter}},
		{name: "a shift does not waive the evidence factor", m: with(func(m *MuShardState) {
			m.Counters["a"], m.Pairs = at(21), map[string]PairState{"b": PairShifting, "c": PairShifting}
		}), want: Decision{Reason: ReasonOwnerBest}},
		{name: "a holding pair moves no claim", m: with(func(m *MuShardState) { m.Pairs = map[string]PairState{"b": PairHolding} }),
			want: Decision{true, "c", ReasonBetter}},
		{name: "holding pairs everywhere", m: with(func(m *MuShardState) {
			m.Pairs = map[string]PairState{"b": PairHolding, "c": PairHolding}
		}), want: Decision{Reason: ReasonOwnerBest}},
		{name: "a holding pair still lets a return through", m: with(func(m *MuShardState) {
			m.Left, m.Pairs = "b", map[string]PairState{"b": PairHolding, "c": PairHolding}
		}), want: Decision{true, "b", ReasonBetter}},
		// A return to the region left asks only to score above the owner.
		{name: "a return needs no evidence factor", m: with(func(m *MuShardState) { m.Left, m.Counters["a"] = "b", at(25) }),
			want: Decision{true, "b", ReasonBetter}},
		{name: "the same scores, not a return", m: with(func(m *MuShardState) { m.Left, m.Counters["a"] = "c", at(25) }),
			want: Decision{Reason: ReasonOwnerBest}},
		{name: "a return in a tie with the owner stays", m: with(func(m *MuShardState) { m.Left, m.Counters["a"] = "b", at(30) }),
			want: Decision{Reason: ReasonOwnerBest}},
		{name: "a return needs no MinEvidence", m: with(func(m *MuShardState) {
			m.Left, m.Counters, m.Visits = "c", map[string]Decayed{"a": at(0.3), "c": at(0.7)}, nil
		}), want: Decision{true, "c", ReasonBetter}},
		{name: "a return beats a higher score without the evidence", m: with(func(m *MuShardState) {
			m.Left, m.Counters = "c", map[string]Decayed{"a": at(18), "b": at(26), "c": at(19)}
		}), want: Decision{true, "c", ReasonBetter}},
		{name: "old accesses weigh less", m: with(func(m *MuShardState) {
			m.Counters["b"] = Decayed{N: 120, At: now.Add(-3 * time.Hour)} // 15 now
		}), want: Decision{true, "c", ReasonBetter}},
		{name: "over capacity is excluded",
			regions: []RegionState{{Name: "a"}, {Name: "b", OverCapacity: true}, {Name: "c"}},
			m:       ready, want: Decision{true, "c", ReasonBetter}},
		{name: "every other region over capacity",
			regions: []RegionState{{Name: "a"}, {Name: "b", OverCapacity: true}, {Name: "c", OverCapacity: true}},
			m:       ready, want: Decision{Reason: ReasonOwnerBest}},
		{name: "ties go to spare capacity",
			regions: []RegionState{{Name: "a"}, {Name: "b", Spare: 1}, {Name: "c", Spare: 2}},
			m:       with(func(m *MuShardState) { m.Counters["c"] = at(30) }), want: Decision{true, "c", ReasonBetter}},
		// Seeds 2 and 3 pick differently: together they show the seed decides.
		{name: "then to the seed (2)", seed: 2,
			m: with(func(m *MuShardState) { m.Counters["c"] = at(30) }), want: Decision{true, "b", ReasonBetter}},
		{name: "then to the seed (3)", seed: 3,
			m: with(func(m *MuShardState) { m.Counters["c"] = at(30) }), want: Decision{true, "c", ReasonBetter}},
		{name: "the cap holds it", m: ready, b: empty, want: Decision{Reason: ReasonRateLimited}},
		{name: "a pin moves it at once", m: with(func(m *MuShardState) {
			m.Pin, m.LastMigration, m.FirstRemote = "c", now, time.Time{}
		}), want: Decision{true, "c", ReasonPin}},
		{name: "a pin beats capacity",
			regions: []RegionState{{Name: "a"}, {Name: "b"}, {Name: "c", OverCapacity: true}},
			m:       with(func(m *MuShardState) { m.Pin = "c" }), want: Decision{true, "c", ReasonPin}},
		{name: "a pinned owner stays", m: with(func(m *MuShardState) { m.RulePin = "a" }),
			want: Decision{Reason: ReasonPinned}},
		{name: "the μ-shard pin beats the rule pin", m: with(func(m *MuShardState) { m.Pin, m.RulePin = "c", "b" }),
			want: Decision{true, "c", ReasonPin}},
		{name: "a pin to an unknown region holds it", m: with(func(m *MuShardState) { m.RulePin = "z" }),
			want: Decision{Reason: ReasonPinUnknown}},
		{name: "pins are paced", m: with(func(m *MuShardState) { m.Pin = "c" }), b: empty,
			want: Decision{Reason: ReasonRateLimited}},
	}
	for _, c := range cases {
		if c.regions == nil {
			c.regions = abc
		}
		got, b := Decide(now, p, c.regions, c.m, c.b, c.seed)
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if took := c.b.refill(now, p.Rate, p.Burst).Tokens - b.refill(now, p.Rate, p.Burst).Tokens; (took == 1) != got.Migrate || (took != 0 && took != 1) {
			t.Errorf("%s: took %v tokens for %+v", c.name, took, got)
		}
	}
}

// TestDecideTieFair: over many seeds, each of three tied regions is picked
// about a third of the time (the reservoir pick is uniform).
func TestDecideTieFair(t *testing.T) {
	now := t0.Add(time.Hour)
	regions := []RegionState{{Name: "a"}, {Name: "b"}, {Name: "c"}, {Name: "d"}}
	m := MuShardState{Owner: "a", FirstRemote: t0, Counters: map[string]Decayed{"b": {2, now}, "c": {2, now}, "d": {2, now}}}
	m.Visits = map[string]Visits{"b": {m.Counters["b"], now}, "c": {m.Counters["c"], now}, "d": {m.Counters["d"], now}}
	p, _ := LocalityPolicy{}.Validated()
	picks := map[string]int{}
	const n = 3000
	for seed := uint64(0); seed < n; seed++ {
		d, _ := Decide(now, p, regions, m, Bucket{}, seed)
		picks[d.To]++
	}
	for _, r := range []string{"b", "c", "d"} {
		if picks[r] < n/3-150 || picks[r] > n/3+150 { // about 5 standard deviations
			t.Errorf("picks %v: %q is far from a third", picks, r)
		}
	}
}

// TestVisits: uses less than the gap apart are one visit, in either order;
// a use the gap or more away is another, decayed like an access.
func TestVisits(t *testing.T) {
	const gap, hl = 10 * time.Second, time.Minute
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	w := func(s int) float64 { return weight(time.Duration(s)*time.Second, hl) }
	type step struct {
		at, lastAt int     // seconds after t0
		n          float64 // Decayed.N after the step (stated at lastAt)
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"a read and its fill", []step{{0, 0, 1}, {0, 0, 1}, {9, 0, 1}}},
		{"the gap is inclusive", []step{{0, 0, 1}, {10, 10, 1 + w(10)}}},
		{"a burst is one visit from its first use", []step{{0, 0, 1}, {6, 0, 1}, {12, 12, 1 + w(12)}, {20, 12, 1 + w(12)}}},
		{"a late batch within the gap", []step{{30, 30, 1}, {21, 30, 1}}},
		{"a late batch of its own", []step{{30, 30, 1}, {20, 30, 1 + w(10)}}},
	}
	for _, c := range cases {
		var v Visits
		for i, s := range c.steps {
			v = v.Visit(at(s.at), gap, hl)
			if v.Last != at(s.lastAt) || v.At != at(s.lastAt) || math.Abs(v.N-s.n) > 1e-12 {
				t.Errorf("%s: step %d: %+v, want N %v, last %ds", c.name, i, v, s.n, s.lastAt)
			}
		}
	}
	p, _ := LocalityPolicy{MigrateAfter: gap, HalfLife: hl}.Validated()
	if got := p.Visit(p.Visit(Visits{}, at(0)), at(9)); got.N != 1 {
		t.Errorf("Visit with MigrateAfter %v as the gap: %+v, want one visit", gap, got)
	}
}
