package embedded

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers"
)

// opGen writes random commands over a few keys. Flags that change the item
// come before the ones that report on it, the order the store applies them
// in. TTLs stay far from the test's duration so both clocks agree on every
// expiry.
type opGen struct {
	r    *rand.Rand
	cas  map[string]uint64 // last CAS the store reported per key
	keys []string
}

var (
	// No value holds a minus sign: for numbers of 2^63 and up memcached
	// looks for one past the end of the item, in slab memory that earlier
	// items left behind, so its answer would depend on history no client
	// sees. Signs are covered by the scenarios, on a fresh server.
	genValues = []string{"", "0", "7", "99", "100", "+3", " 5 ", "12 ab", "abc",
		"18446744073709551615", "18446744073709551610", "x"}
	genTTLs = []string{"0", "-1", "1000", "3600", "{now+5000}", "{now-10}"}
)

func (g *opGen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *opGen) maybe(p float64) bool    { return g.r.Float64() < p }

func (g *opGen) casFlag(key string) string {
	c := g.cas[key]
	switch g.r.IntN(5) {
	case 0:
		return "C0"
	case 1:
		return fmt.Sprintf("C%d", c+1000)
	case 2:
		if c > 1 {
			return fmt.Sprintf("C%d", c-1)
		}
	}
	return fmt.Sprintf("C%d", c)
}

func (g *opGen) next() string {
	k := g.pick(g.keys)
	var f []string
	add := func(p float64, s string) {
		if g.maybe(p) {
			f = append(f, s)
		}
	}
	switch n := g.r.IntN(100); {
	case n < 25:
		add(0.2, "N"+g.pick(genTTLs))
		add(0.2, "T"+g.pick(genTTLs))
		add(0.2, "R"+g.pick([]string{"0", "500", "2000", "{now+2000}"}))
		for _, o := range []string{"v", "c", "f", "t", "s", "h", "l"} {
			add(0.5, o)
		}
		add(0.1, "u")
		return "mg " + k + " " + strings.Join(f, " ")
	case n < 50:
		add(0.4, "T"+g.pick(genTTLs))
		add(0.3, fmt.Sprintf("F%d", g.r.IntN(3)))
		add(0.3, g.casFlag(k))
		add(0.3, "I")
		add(0.4, "M"+g.pick([]string{"S", "E", "A", "P", "R"}))
		add(0.1, "N30")
		add(0.5, "c")
		return "ms " + k + " " + strings.Join(f, " ") + "|" + g.pick(genValues)
	case n < 60:
		add(0.3, g.casFlag(k))
		add(0.4, "I")
		add(0.3, "T"+g.pick(genTTLs))
		return "md " + k + " " + strings.Join(f, " ")
	case n < 80:
		add(0.3, "N"+g.pick(genTTLs))
		add(0.3, fmt.Sprintf("J%d", g.r.IntN(20)))
		add(0.5, fmt.Sprintf("D%d", g.r.IntN(200)))
		add(0.3, "T"+g.pick(genTTLs))
		add(0.3, "M"+g.pick([]string{"I", "D", "+", "-"}))
		add(0.2, g.casFlag(k))
		for _, o := range []string{"v", "c", "t"} {
			add(0.5, o)
		}
		return "ma " + k + " " + strings.Join(f, " ")
	case n < 99:
		switch g.r.IntN(9) {
		case 0:
			return fmt.Sprintf("set %s %d %s|%s", k, g.r.IntN(3), g.pick(genTTLs), g.pick(genValues))
		case 1:
			return fmt.Sprintf("add %s 0 %s|%s", k, g.pick(genTTLs), g.pick(genValues))
		case 2:
			return fmt.Sprintf("append %s 0 0|%s", k, g.pick(genValues))
		case 3:
			return fmt.Sprintf("cas %s 1 0 %s|%s", k, g.casFlag(k)[1:], g.pick(genValues))
		case 4:
			return "gets " + k
		case 5:
			return fmt.Sprintf("incr %s %d", k, g.r.IntN(1000))
		case 6:
			return fmt.Sprintf("decr %s %d", k, g.r.IntN(1000))
		case 7:
			return fmt.Sprintf("touch %s %s", k, g.pick(genTTLs))
		default:
			return "delete " + k
		}
	default:
		return "flush_all"
	}
}

var (
	diffSeed  = flag.Uint64("diff.seed", 20240601, "seed of TestRandomAgainstMemcached")
	diffSteps = flag.Int("diff.steps", 4000, "commands TestRandomAgainstMemcached sends")
)

// TestRandomAgainstMemcached runs the same random command stream through the
// store and a real memcached and requires identical replies.
func TestRandomAgainstMemcached(t *testing.T) {
	addr := startMemcached(t)
	mc := dialMemcached(t, addr)
	base := mc.beginScenario()

	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	seed := *diffSeed
	g := &opGen{r: rand.New(rand.NewPCG(seed, 1)), cas: map[string]uint64{}, keys: []string{"a", "b", "c"}}
	var history []string
	steps := *diffSteps
	if testing.Short() {
		steps = 500
	}
	var op tiers.Op
	for i := 0; i < steps; i++ {
		line := g.next()
		p := parseStep(t, line, time.Now().Unix())
		op.Req = p.req
		s.Do(&op)
		got := reply(p, &op.Res)
		if op.Res.CAS != 0 {
			g.cas[p.key] = op.Res.CAS
		}
		mcGot := mc.roundTrip(p.wire(base), base)
		history = append(history, fmt.Sprintf("%s => %s", line, got))
		if !sameReply(mcGot, got) {
			if len(history) > 30 {
				history = history[len(history)-30:]
			}
			t.Fatalf("seed %d step %d: %s\n store     %q\n memcached %q\nrecent history:\n%s",
				seed, i, line, got, mcGot, strings.Join(history, "\n"))
		}
	}
}
