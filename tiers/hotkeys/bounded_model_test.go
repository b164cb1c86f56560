package hotkeys

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestBoundedRepliesRandomized drives one view (bounded.go) through
// random interleavings, one seed each: this strata's incrs issued, landing
// at the server and acknowledged in any order; the rounds that read the
// counter (an incr's refresh, a get's, an absent part's retry) reading it
// at any moment between their issue and their end; other stratas'
// increments. The checker: replies in issue order never go down, none is
// above the counter's total once everything landed, and none is below the
// sum of this strata's own increments up to it.
func TestBoundedRepliesRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 3000; seed++ {
		if msg := runBoundedModel(seed); msg != "" {
			t.Fatalf("seed %d: %s", seed, msg)
		}
	}
}

type modelIncr struct {
	delta            uint64
	own              uint64 // this strata's deltas issued up to this one
	reply            uint64
	answered, landed bool
	round            *modelRound // the refresh this incr's round does
}

// modelRound is a round that reads every part.
type modelRound struct {
	s    snap
	incr *modelIncr // nil: a get's (or a retry's) reading
	e    uint64
	read bool
}

func runBoundedModel(seed uint64) string {
	const staleness, incrs = 100, 40
	rng := rand.New(rand.NewPCG(seed, 7))
	var (
		b       boundedKey
		counter uint64 // the servers' total
		now     int64  = 1000
		own     uint64
		issued  []*modelIncr
		open    []*modelIncr // issued, not yet acknowledged
		rounds  []*modelRound
		waiting []*modelIncr
	)
	land := func(in *modelIncr) {
		if !in.landed {
			counter += in.delta
			in.landed = true
		}
	}
	// A round reads the counter: its own part after its own increment,
	// which it carries.
	read := func(r *modelRound) {
		if !r.read {
			r.e, r.read = counter, true
			if r.incr != nil && !r.incr.landed {
				r.e += r.incr.delta
			}
		}
	}
	drop := func(r *modelRound) {
		i := slices.Index(rounds, r)
		rounds = slices.Delete(rounds, i, i+1)
	}
	// An incr is acknowledged once it landed, and with its refresh's
	// reading when it carries one.
	ack := func(i int) {
		in := open[i]
		if r := in.round; r != nil {
			v := b.refreshed(r.e, r.s, true)
			for _, w := range waiting {
				w.reply, w.answered = v, true
			}
			waiting = waiting[:0]
			b.waiters = b.waiters[:0]
			drop(r)
		}
		b.acked(in.delta, true)
		open = slices.Delete(open, i, i+1)
	}
	// A get's round ends; it reports whether one had read.
	endGet := func() bool {
		for _, g := range rounds {
			if g.incr == nil && g.read {
				b.read(g.e, g.s)
				drop(g)
				return true
			}
		}
		return false
	}
	for len(issued) < incrs || len(open) > 0 || len(rounds) > 0 {
		now += rng.Int64N(30)
		switch ev := rng.IntN(7); {
		case ev == 0 && len(issued) < incrs:
			in := &modelIncr{delta: 1 + rng.Uint64N(3)}
			own += in.delta
			in.own = own
			step := b.plan(now, staleness)
			if step.refreshes() {
				in.round = &modelRound{s: b.snapshot(now), incr: in}
				rounds = append(rounds, in.round)
			}
			v := b.issue(in.delta, step)
			if step.waits() {
				waiting = append(waiting, in)
				b.waiters = append(b.waiters, &fan{})
			} else {
				in.reply, in.answered = v, true
			}
			issued = append(issued, in)
			open = append(open, in)
		case ev == 1 && len(open) > 0:
			land(open[rng.IntN(len(open))])
		case ev == 2 && len(open) > 0:
			i := rng.IntN(len(open))
			if in := open[i]; in.landed && (in.round == nil || in.round.read) {
				ack(i)
			}
		case ev == 3 && len(rounds) > 0:
			read(rounds[rng.IntN(len(rounds))])
		case ev == 4 && len(issued) > 0:
			rounds = append(rounds, &modelRound{s: b.snapshot(now)}) // a get starts
		case ev == 5:
			endGet()
		case ev == 6:
			counter += rng.Uint64N(4) // other stratas
		}
		if len(issued) == incrs && rng.IntN(4) == 0 {
			// Past the last issue, let everything end.
			for _, in := range open {
				land(in)
			}
			for _, r := range rounds {
				read(r)
			}
			endGet()
			if len(open) > 0 {
				ack(rng.IntN(len(open)))
			}
		}
	}
	var last uint64
	for n, in := range issued {
		switch {
		case !in.answered:
			return fmt.Sprintf("incr %d never answered", n)
		case in.reply < last:
			return fmt.Sprintf("incr %d answered %d after %d", n, in.reply, last)
		case in.reply > counter:
			return fmt.Sprintf("incr %d answered %d, above the final total %d", n, in.reply, counter)
		case in.reply < in.own:
			return fmt.Sprintf("incr %d answered %d, below this strata's own %d", n, in.reply, in.own)
		}
		last = in.reply
	}
	return ""
}
