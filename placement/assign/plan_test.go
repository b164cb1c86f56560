package assign

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/placement"
)

func members(n int) []Member {
	ms := make([]Member, n)
	for i := range ms {
		ms[i] = Member{Addr: string(rune('a' + i)), Weight: 1}
	}
	return ms
}

func counts(owner []int, n int) []int {
	c := make([]int, n)
	for _, o := range owner {
		c[o]++
	}
	return c
}

// A dead server's shards all move in one emergency plan, spread over the
// others, and nothing else moves.
func TestEmergencyMovesOnlyOrphans(t *testing.T) {
	in := &Input{Members: members(4), Owner: make([]int, 64)}
	for sh := range in.Owner {
		in.Owner[sh] = sh % 4
	}
	in.Members[2].State = Down
	if got := Orphans(in); got != 16 {
		t.Fatalf("orphans = %d, want 16", got)
	}
	out, err := Plan(in, Options{Mode: placement.Emergency, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Moves) != 16 {
		t.Fatalf("moves = %d, want 16", len(out.Moves))
	}
	for _, m := range out.Moves {
		if m.From != 2 || m.To == 2 {
			t.Fatalf("move %+v: only server 2's shards may move, never to it", m)
		}
	}
	c := counts(out.Owner, 4)
	if c[2] != 0 || c[0] < 20 || c[1] < 20 || c[3] < 20 {
		t.Fatalf("counts %v: want server 2 empty and its 16 shards spread", c)
	}
	again, _ := Plan(in, Options{Mode: placement.Emergency, Seed: 1})
	for sh := range out.Owner {
		if again.Owner[sh] != out.Owner[sh] {
			t.Fatal("same input and seed gave another plan")
		}
	}
}

// Periodic mode empties a draining server, and fills a server that joined
// empty.
func TestPeriodicDrainAndRefill(t *testing.T) {
	in := &Input{Members: members(4), Owner: make([]int, 64)}
	for sh := range in.Owner {
		in.Owner[sh] = sh % 4
	}
	in.Members[1].State = Draining
	out, err := Plan(in, Options{Mode: placement.Periodic, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if c := counts(out.Owner, 4); c[1] != 0 {
		t.Fatalf("counts %v: the draining server keeps shards", c)
	}
	in.Owner = out.Owner
	in.Members[1].State = Up
	back, err := Plan(in, Options{Mode: placement.Periodic, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := counts(back.Owner, 4)
	for i, n := range c {
		if n > 17 || n < 12 {
			t.Fatalf("counts %v: server %d not within 10%% of the mean 16", c, i)
		}
	}
	for _, m := range back.Moves {
		if m.To != 1 {
			t.Fatalf("move %+v: only moves onto the returned server are needed", m)
		}
	}
}

// Skewed request loads are balanced by load, not by count.
func TestPeriodicBalancesLoad(t *testing.T) {
	in := &Input{Members: members(4), Owner: make([]int, 64), Requests: make([]float64, 64)}
	for sh := range in.Owner {
		in.Owner[sh] = sh % 4
		in.Requests[sh] = 1
	}
	for sh := 0; sh < 64; sh += 4 { // server 0 carries 10x its share
		in.Requests[sh] = 10
	}
	out, err := Plan(in, Options{Mode: placement.Periodic, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	load := make([]float64, 4)
	for sh, o := range out.Owner {
		load[o] += in.Requests[sh]
	}
	mean := (16*10 + 48) / 4.0
	for i, l := range load {
		if l > 1.1*mean {
			t.Fatalf("server %d load %v above 1.1 x mean %v (loads %v)", i, l, mean, load)
		}
	}
}

func TestNoServerUp(t *testing.T) {
	in := &Input{Members: members(2), Owner: []int{0, 1}}
	in.Members[0].State, in.Members[1].State = Down, Returning
	if _, err := Plan(in, Options{Mode: placement.Emergency}); err != ErrNoServer {
		t.Fatalf("err = %v, want ErrNoServer", err)
	}
}

func TestDetectorNeedsTimeAndReports(t *testing.T) {
	d := Detector{After: 2 * time.Second}
	t0 := time.Unix(1000, 0)
	ev := func(ok bool, rep, agents int) []Evidence {
		return []Evidence{{Addr: "a", ProbeOK: ok, Reporters: rep, Agents: agents}}
	}
	steps := []struct {
		at   time.Duration
		ev   []Evidence
		want Verdict
	}{
		{0, ev(false, 2, 2), Suspect},
		{time.Second, ev(false, 2, 2), Suspect},
		{2 * time.Second, ev(false, 0, 2), Suspect}, // long enough, but no agent agrees
		{2 * time.Second, ev(false, 1, 2), Dead},    // half of the agents agree
		{3 * time.Second, ev(true, 1, 2), Alive},
		{4 * time.Second, ev(false, 0, 0), Suspect}, // a new streak starts
		{6 * time.Second, ev(false, 0, 0), Dead},    // no agents: the own probe decides
	}
	for i, s := range steps {
		if got := d.Observe(t0.Add(s.at), s.ev)[0]; got != s.want {
			t.Fatalf("step %d: verdict %d, want %d", i, got, s.want)
		}
	}
}

// A member that carries reads for read replicas gets that much less owned
// load: a balanced plan evens owned plus carried.
func TestPlanCountsCarriedLoad(t *testing.T) {
	const shards = 256
	in := &Input{Members: members(4), Owner: make([]int, shards), Requests: make([]float64, shards), Carried: []float64{0, 0, 0, 64}}
	for sh := range in.Owner {
		in.Owner[sh] = sh % 4
		in.Requests[sh] = 1
	}
	out, err := Plan(in, Options{Mode: placement.Periodic, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	load := make([]float64, 4)
	for sh, o := range out.Owner {
		load[o] += in.Requests[sh]
	}
	load[3] += 64
	mean := (shards + 64) / 4.0
	for i, l := range load {
		if l > 1.10*mean {
			t.Errorf("member %d carries %.0f with its replicas, mean %.0f: %v", i, l, mean, load)
		}
	}
	if load[3] >= 64+shards/4 {
		t.Fatalf("the member carrying replica reads kept all its owned load: %v", load)
	}
}
