package placement

import (
	"testing"
	"time"
)

// shiftRun claims at every offset of at (after t0) in turn and returns
// the Shift after each, with whether it shifted just after.
func shiftRun(p LocalityPolicy, s Shift, at []time.Duration) (Shift, []bool) {
	out := make([]bool, len(at))
	for i, d := range at {
		s = p.Claim(s, t0.Add(d))
		out[i] = p.Shifting(s, t0.Add(d))
	}
	return s, out
}

// every is n claims step apart from from.
func every(from, step time.Duration, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = from + time.Duration(i)*step
	}
	return out
}

func firstTrue(b []bool) int {
	for i, v := range b {
		if v {
			return i
		}
	}
	return -1
}

// TestShift: with a one-second half-life (usual rate over 8 s), a pair
// claiming once a second for 40 s never shifts; 40 claims in the next
// second do, from the 8th on; and a second later it still does. The
// pair's first claims, however many at once, are no shift, and neither
// are a few close together against a rare usual rate (ShiftMinClaims).
func TestShift(t *testing.T) {
	p, err := LocalityPolicy{HalfLife: time.Second}.Validated()
	if err != nil {
		t.Fatal(err)
	}
	s, shifted := shiftRun(p, Shift{}, every(0, time.Second, 40))
	if i := firstTrue(shifted); i >= 0 {
		t.Fatalf("a steady rate shifted at claim %d: %+v", i, s)
	}
	s, shifted = shiftRun(p, s, every(40*time.Second, 25*time.Millisecond, 40))
	if i := firstTrue(shifted); i != 7 || !shifted[len(shifted)-1] {
		t.Fatalf("a burst of 40 claims in a second: first shifting at claim %d (want 7), %v at the last: %+v", i, shifted[len(shifted)-1], s)
	}
	if !p.Shifting(s, t0.Add(41*time.Second)) {
		t.Fatalf("a second after the burst, not shifting: %+v", s)
	}
	if p.Shifting(s, t0.Add(44*time.Second)) {
		t.Fatalf("four half-lives after the burst, still shifting: %+v", s)
	}

	if _, shifted := shiftRun(p, Shift{}, every(0, time.Millisecond, 200)); firstTrue(shifted) >= 0 {
		t.Fatalf("a pair's first claims shifted at claim %d", firstTrue(shifted))
	}

	rare, _ := shiftRun(p, Shift{}, every(0, 10*time.Second, 10))
	if _, shifted := shiftRun(p, rare, every(100*time.Second, 10*time.Millisecond, 8)); firstTrue(shifted) >= 0 {
		t.Fatalf("8 claims against a rare usual rate shifted at claim %d", firstTrue(shifted))
	}
}

// TestShiftEnds: a rate that rose fivefold for good (4 claims a second,
// then 20) shifts from 2.4 s after it rose; the shift ends ShiftLasts
// (4 s) after it began at the latest, and none begins again: by the end
// of the next ShiftHalfLives (8 s), in which every claim counts in Usual,
// Usual has caught up.
func TestShiftEnds(t *testing.T) {
	p, err := LocalityPolicy{HalfLife: time.Second}.Validated()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := shiftRun(p, Shift{}, every(0, 250*time.Millisecond, 160))
	s, shifted := shiftRun(p, s, every(40*time.Second, 50*time.Millisecond, 20*60))
	first, last := firstTrue(shifted), -1
	for i, v := range shifted {
		if v {
			last = i
		}
	}
	if first != 48 || last < first || time.Duration(last-first)*50*time.Millisecond >= 4*time.Second {
		t.Fatalf("a fivefold rate for good shifted from claim %d to %d (want from the 49th, 2.4 s in, for under 4 s): %+v", first, last, s)
	}
	if p.Shifting(s, t0.Add(100*time.Second)) || !s.Began.Equal(t0.Add(42400*time.Millisecond)) {
		t.Fatalf("a fivefold rate for good shifted again: %+v", s)
	}
}

// TestShiftMovesOnOneVisit: while the pair shifts, one visit of one
// access moves a μ-shard whose owner scores nothing; not otherwise; and a
// shift never lowers Evidence (a warm owner keeps its μ-shard).
func TestShiftMovesOnOneVisit(t *testing.T) {
	p, err := LocalityPolicy{HalfLife: time.Hour, MigrateAfter: 10 * time.Minute, MinInterval: 6 * time.Hour, Rate: 1, Burst: 2}.Validated()
	if err != nil {
		t.Fatal(err)
	}
	regions := []RegionState{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	now := t0.Add(24 * time.Hour)
	one := Decayed{N: 1, At: now.Add(-time.Minute)}
	m := MuShardState{Owner: "a", FirstRemote: now.Add(-11 * time.Minute),
		Counters: map[string]Decayed{"b": one}, Visits: map[string]Visits{"b": {Decayed: one, Last: one.At}}}
	if d := Choose(now, p, regions, m, 1); d.Migrate {
		t.Fatalf("one visit, no shift: %+v", d)
	}
	m.Pairs = map[string]PairState{"c": PairShifting}
	if d := Choose(now, p, regions, m, 1); d.Migrate {
		t.Fatalf("one visit, another pair shifting: %+v", d)
	}
	m.Pairs = map[string]PairState{"b": PairShifting}
	if d := Choose(now, p, regions, m, 1); d != (Decision{Migrate: true, To: "b", Reason: ReasonBetter}) {
		t.Fatalf("one visit while its pair shifts: %+v, want a move to b", d)
	}
	m.Counters["a"] = Decayed{N: 0.7, At: now}
	if d := Choose(now, p, regions, m, 1); d.Migrate {
		t.Fatalf("one access against an owner scoring 0.7, shifting: %+v", d)
	}
}

// TestShiftHolds: a pair whose shift began holds from ShiftLasts to
// ShiftLasts + ShiftHalfLives half-lives after, whatever its claims do
// then; before it, it shifts while its claims surge; after it, it is
// usual. A pair that never shifted never holds.
func TestShiftHolds(t *testing.T) {
	p, err := LocalityPolicy{HalfLife: time.Second}.Validated()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := shiftRun(p, Shift{}, every(0, time.Second, 40))
	if st := p.Pair(s, t0.Add(40*time.Second)); st != PairUsual {
		t.Fatalf("a steady rate: %v, want usual", st)
	}
	s, _ = shiftRun(p, s, every(40*time.Second, 25*time.Millisecond, 40))
	began := s.Began
	if began.IsZero() {
		t.Fatalf("the burst began no shift: %+v", s)
	}
	for _, c := range []struct {
		after time.Duration
		want  PairState
	}{
		{0, PairShifting},
		{3999 * time.Millisecond, PairUsual}, // the surge has decayed by then
		{4 * time.Second, PairHolding},
		{11999 * time.Millisecond, PairHolding},
		{12 * time.Second, PairUsual},
	} {
		if st := p.Pair(s, began.Add(c.after)); st != c.want {
			t.Errorf("%v after the shift began: %v, want %v", c.after, st, c.want)
		}
	}
	// Claims during the hold change nothing about it.
	held, _ := shiftRun(p, s, every(began.Sub(t0)+5*time.Second, 10*time.Millisecond, 100))
	if !held.Began.Equal(began) || p.Pair(held, began.Add(6*time.Second)) != PairHolding {
		t.Errorf("claims in the hold: began %v (was %v), %v at 6 s", held.Began, began, p.Pair(held, began.Add(6*time.Second)))
	}
}
