package placement

import (
	"testing"
	"time"
)

// problemFromBytes decodes a small problem: one byte each for the server
// count, the metric count and the mode, then per server capacity, zone,
// region and state bits, then per shard loads, replicas, preference and
// owners, until the bytes run out. Any input decodes to a valid problem
// (or to none, when too short), so the fuzzer explores the search, not
// the validation.
func problemFromBytes(data []byte) (*Problem, Options, bool) {
	next := func() (int, bool) {
		if len(data) == 0 {
			return 0, false
		}
		b := data[0]
		data = data[1:]
		return int(b), true
	}
	n, ok1 := next()
	m, ok2 := next()
	mode, ok3 := next()
	if !ok1 || !ok2 || !ok3 {
		return nil, Options{}, false
	}
	p := &Problem{Metrics: 1 + m%2}
	o := Options{Mode: Mode(mode % 2), Seed: uint64(mode), Samples: 1 + mode%5, MaxMovesPerServer: mode % 3}
	for i := 0; i < 1+n%8; i++ {
		s := Server{Capacity: make([]float64, p.Metrics)}
		for k := range s.Capacity {
			c, _ := next()
			s.Capacity[k] = float64(1 + c)
		}
		bits, _ := next()
		s.Zone, s.Region = bits%3, (bits/3)%2
		s.Dead = bits&64 != 0 && i > 0 // server 0 always lives
		s.Draining = bits&128 != 0 && !s.Dead
		p.Servers = append(p.Servers, s)
	}
	for len(data) > 0 && len(p.Shards) < 40 {
		sh := Shard{Load: make([]float64, p.Metrics), Region: -1}
		for k := range sh.Load {
			l, _ := next()
			sh.Load[k] = float64(l) / 4
		}
		r, _ := next()
		sh.Replicas = 1 + r%3
		if r&8 != 0 {
			sh.Region = (r / 16) % 3 // region 2 exists on no server
		}
		var owners []int
		for j := 0; j < sh.Replicas; j++ {
			o, _ := next()
			owners = append(owners, o%(len(p.Servers)+2)-1) // -1 and one past the end are invalid
		}
		p.Shards = append(p.Shards, sh)
		p.Assignment = append(p.Assignment, owners)
	}
	return p, o, true
}

// FuzzSolve holds any decodable problem to the hard constraints and, in
// periodic mode, to the rule that every step improves its goal without
// worsening a higher one.
func FuzzSolve(f *testing.F) {
	// Two servers, one metric, periodic; one shard on server 0.
	f.Add([]byte{1, 0, 0, 10, 0, 10, 1, 20, 0, 1})
	// Emergency mode, a dead server (state bits 64) holding two shards.
	f.Add([]byte{2, 0, 1, 50, 0, 50, 64, 50, 1, 40, 0, 2, 40, 0, 2})
	// Two metrics, a draining server (128), replicas and a preference.
	f.Add([]byte{3, 1, 2, 90, 90, 128, 90, 90, 1, 90, 90, 4, 90, 90, 5, 30, 30, 2, 1, 2, 3, 9, 9, 25, 0, 0})
	// Repeated and out-of-range owners.
	f.Add([]byte{1, 0, 0, 200, 0, 200, 0, 5, 1, 1, 1, 9, 2, 0, 3, 3, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, o, ok := problemFromBytes(data)
		if !ok {
			return
		}
		if err := o.validate(p); err != nil {
			t.Fatalf("decoded options invalid: %v", err)
		}
		if err := p.validate(); err != nil {
			t.Fatalf("decoded problem invalid: %v", err)
		}
		st := newState(p, &o)
		prev := st.report()
		if o.Mode == Periodic {
			st.trace = func(step []Move) {
				cur := st.report()
				if g, better, changed := firstChange(&prev, &cur); !changed || !better {
					t.Fatalf("step %+v: goal %v got worse: %v -> %v", step, g, prev.Violations, cur.Violations)
				}
				prev = cur
			}
		}
		res := solve(st)
		checkHard(t, p, o, res)
	})
}

// A deadline read through the injected clock stops the search; the
// result is still valid, only unfinished.
func TestDeadlineStopsTheSearch(t *testing.T) {
	p := genProblem(newRand(1), genSpec{util: 0.6, many: true, single: true})
	calls := 0
	start := time.Unix(0, 0)
	o := Options{Seed: 1, Samples: 1, Now: func() time.Time {
		calls++
		return start.Add(time.Duration(calls) * time.Second)
	}, Deadline: start.Add(500 * time.Millisecond)}
	if full := solveOK(t, p, Options{Seed: 1, Samples: 1}); full.Steps <= 4096 {
		t.Fatalf("the problem takes %d steps, too few to reach the first clock read", full.Steps)
	}
	res := solveOK(t, p, o)
	if !res.Exhausted || calls != 1 || res.Steps != 4096 {
		t.Fatalf("exhausted %v after %d clock reads and %d steps", res.Exhausted, calls, res.Steps)
	}
	res = solveOK(t, p, Options{Seed: 1, MaxSteps: 10})
	if !res.Exhausted || res.Steps != 10 {
		t.Fatalf("step budget 10: exhausted %v after %d steps", res.Exhausted, res.Steps)
	}
}
