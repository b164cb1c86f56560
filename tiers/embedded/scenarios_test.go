package embedded

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// fakeClock is the injected Config.Now of the tests.
type fakeClock struct{ t atomic.Int64 }

func newClock(start int64) *fakeClock {
	c := &fakeClock{}
	c.t.Store(start)
	return c
}

func (c *fakeClock) Now() int64      { return c.t.Load() }
func (c *fakeClock) advance(d int64) { c.t.Add(d) }

// clockStart is a realistic Unix time, so that absolute exptimes (above 30
// days) behave as they do on a live server.
const clockStart = 1_700_000_000

// scenario is a memcached session: each step is "command => reply", or
// "sleep N" to advance the injected clock. Scenarios without sleeps are also
// replayed against a real memcached (TestScenariosAgainstMemcached), so
// every expected reply here is memcached's.
type scenario struct {
	name  string
	steps []string
}

func (sc scenario) usesClock() bool {
	for _, s := range sc.steps {
		if strings.HasPrefix(s, "sleep ") {
			return true
		}
	}
	return false
}

var (
	maxValue1 = 1<<20 - 60   // largest value with a one-byte key and zero flags
	bigNum    = 512<<10 - 62 // largest arithmetic value under key "big"
	tooBig    = strings.Repeat("z", maxValue1+1)
)

var scenarios = []scenario{
	{"get miss and hit", []string{
		"mg k v => EN",
		"ms k F7 T0|hello => HD",
		"mg k v f c t s => VA 5 f7 c1 t-1 s5|hello",
		"mg k => HD",
		"get k => VALUE k 7 5|hello|END",
		"gets k => VALUE k 7 5 1|hello|END",
		"get nope => END",
	}},
	{"set overwrites and bumps cas", []string{
		"set k 1 0|a => STORED",
		"set k 2 0|bb => STORED",
		"mg k v f c => VA 2 f2 c2|bb",
		"ms k c|ccc => HD c3",
	}},
	{"relative ttl expires", []string{
		"set k 0 10|v => STORED",
		"mg k t => HD t10",
		"sleep 9",
		"mg k t v => VA 1 t1|v",
		"sleep 1",
		"mg k v => EN",
	}},
	{"absolute ttl", []string{
		"ms k T{now+100}|v => HD",
		"mg k t => HD t100",
		"ms p T{now-5}|v => HD",
		"mg p => EN",
		"ms q T2592000|v => HD",
		"mg q t => HD t2592000",
		"ms r T2592001|v => HD",
		"mg r => EN",
	}},
	{"absolute ttl expires on time", []string{
		"ms k T{now+20}|v => HD",
		"sleep 19",
		"mg k t => HD t1",
		"sleep 1",
		"mg k => EN",
	}},
	{"negative ttl is expired at once", []string{
		"set k 0 -1|v => STORED",
		"get k => END",
		"ms k T-100|v => HD",
		"mg k => EN",
	}},
	{"zero ttl never expires", []string{
		"ms k T0|v => HD",
		"sleep 100000000",
		"mg k t v => VA 1 t-1|v",
	}},
	{"touch and gat", []string{
		"touch k 10 => NOT_FOUND",
		"set k 3 100|v => STORED",
		"touch k 10 => TOUCHED",
		"mg k t => HD t10",
		"gat 50 k => VALUE k 3 1|v|END",
		"mg k t => HD t50",
		"gats 0 k => VALUE k 3 1 1|v|END",
		"mg k t => HD t-1",
		"mg k T30 t => HD t30",
		"touch k -1 => TOUCHED",
		"mg k => EN",
	}},
	{"touch extends life under the clock", []string{
		"set k 0 10|v => STORED",
		"sleep 8",
		"touch k 10 => TOUCHED",
		"sleep 8",
		"mg k t => HD t2",
		"sleep 2",
		"mg k => EN",
	}},
	{"mg T0 removes the expiry", []string{
		"set k 0 5|v => STORED",
		"mg k T0 => HD",
		"sleep 10",
		"mg k t => HD t-1",
	}},
	{"add", []string{
		"add k 0 0|a => STORED",
		"add k 0 0|b => NOT_STORED",
		"mg k v => VA 1|a",
		"ms k ME|c => NS",
		"ms n ME C5|c => HD",
	}},
	{"replace", []string{
		"replace k 0 0|a => NOT_STORED",
		"ms k MR|a => NS",
		"set k 0 0|a => STORED",
		"replace k 9 0|b => STORED",
		"mg k v f => VA 1 f9|b",
	}},
	{"append and prepend keep flags and ttl", []string{
		"append k 0 0|x => NOT_STORED",
		"prepend k 0 0|x => NOT_STORED",
		"set k 5 100|mid => STORED",
		"append k 9 0|>> => STORED",
		"prepend k 9 0|<< => STORED",
		"mg k v f t c => VA 7 f5 t100 c3|<<mid>>",
		"ms k MA T0 F1|! => HD",
		"mg k v f t => VA 8 f5 t100|<<mid>>!",
	}},
	{"append with cas", []string{
		"set k 0 0|a => STORED",
		"ms k MA C99|b => EX",
		"ms k MA C1 c|b => HD c2",
		"ms k MP C0|c => HD",
		"mg k v => VA 3|cab",
	}},
	{"append without vivify support", []string{
		"ms k MA N30|x => NS",
		"mg k => EN",
	}},
	{"cas", []string{
		"cas k 0 0 1|a => NOT_FOUND",
		"set k 0 0|a => STORED",
		"gets k => VALUE k 0 1 1|a|END",
		"cas k 0 0 2|b => EXISTS",
		"cas k 0 0 1|b => STORED",
		"cas k 0 0 1|c => EXISTS",
		"ms k C2 c|d => HD c3",
		"ms k C0|e => EX",
		"ms k MR C3|e => HD",
		"ms k MR C3|f => EX",
		"ms nope C3|x => NF",
		"ms nope MR C3|x => NF",
		"mg k v c => VA 1 c4|e",
	}},
	{"invalidate on ms", []string{
		"ms k T100|v1 => HD",
		"ms k|v2 => HD",
		"ms k C1 I T5|old => HD",
		"mg k v c t => VA 3 c3 t-1 X W|old",
		"mg k v => VA 3 Z X|old",
		"ms k C99 I|x => EX",
		"ms k C3 I|new => HD",
		"mg k v c => VA 3 c4|new",
		"ms k I|plain => HD",
		"mg k v => VA 5|plain",
	}},
	{"invalidate keeps the token and ttl", []string{
		"ms k T100|a => HD",
		"md k I => HD",
		"mg k c t => HD c2 t100 X W",
		"ms k C1 I|b => HD",
		"mg k c t v => VA 1 c3 t100 Z X|b",
	}},
	{"delete", []string{
		"delete k => NOT_FOUND",
		"md k => NF",
		"set k 0 0|a => STORED",
		"delete k => DELETED",
		"mg k => EN",
		"set k 0 0|a => STORED",
		"md k C9 => EX",
		"md k C0 => EX",
		"md k C2 => HD",
		"md k C2 => NF",
	}},
	{"md invalidate", []string{
		"ms k T100|v => HD",
		"md k I T30 => HD",
		"mg k v c t => VA 1 c2 t30 X W|v",
		"mg k c => HD c2 Z X",
		"md k I => HD",
		"mg k c t => HD c3 t30 X W",
		"ms k C3|fresh => HD",
		"mg k v => VA 5|fresh",
	}},
	{"vivify", []string{
		"mg k N30 t v c s => VA 0 t30 c1 s0 W|",
		"mg k N30 t v c => VA 0 t30 c1 Z|",
		"mg k v => VA 0 Z|",
		"ms k C1|data => HD",
		"mg k v N30 => VA 4|data",
		"mg z N0 t => HD t-1 W",
	}},
	{"vivify placeholder expires", []string{
		"mg k N10 => HD W",
		"sleep 10",
		"mg k N10 => HD W",
		"mg k => HD Z",
	}},
	{"recache", []string{
		"set r 0 100|r => STORED",
		"mg r R30 t => HD t100",
		"mg r R101 t => HD t100 W",
		"mg r R200 t => HD t100 Z",
		"mg r t => HD t100 Z",
		"set r 0 100|r => STORED",
		"mg r R200 => HD W",
		"set n 0 0|n => STORED",
		"mg n R200 => HD",
		"mg n R0 => HD",
	}},
	{"recache as ttl runs down", []string{
		"set r 0 100|r => STORED",
		"mg r R30 => HD",
		"sleep 70",
		"mg r R30 t => HD t30",
		"sleep 1",
		"mg r R30 t => HD t29 W",
	}},
	{"fetched and last access", []string{
		"set a 0 0|x => STORED",
		"mg a h l t => HD h0 l0 t-1",
		"mg a h => HD h1",
		"mg b u h => EN",
		"set b 0 0|x => STORED",
		"mg b h u => HD h0",
		"mg b h u => HD h0",
		"mg b h => HD h0",
		"mg b h => HD h1",
	}},
	{"last access under the clock", []string{
		"set a 0 0|x => STORED",
		"sleep 5",
		"mg a l h => HD l5 h0",
		"sleep 3",
		"mg a l h => HD l8 h1",
		"sleep 4",
		"mg a l => HD l4",
		"sleep 2",
		"mg a l u => HD l2",
		"sleep 1",
		"mg a l => HD l3",
		"add a 0 0|y => NOT_STORED",
		"mg a l => HD l0",
	}},
	{"incr and decr", []string{
		"incr n 1 => NOT_FOUND",
		"decr n 1 => NOT_FOUND",
		"set n 0 0|10 => STORED",
		"incr n 5 => 15",
		"decr n 20 => 0",
		"get n => VALUE n 0 2|0 |END",
		"incr n 0 => 0",
		"ma n D7 v c t => VA 1 c5 t-1|7",
		"ma n MD D2 v => VA 1|5",
		"ma n M- v => VA 1|4",
		"ma n M+ v => VA 1|5",
		"ma n MI => HD",
		"mg n v => VA 2|6 ",
	}},
	{"incr wraps and pads", []string{
		"set n 0 0|18446744073709551615 => STORED",
		"incr n 1 => 0",
		"get n => VALUE n 0 20|0" + strings.Repeat(" ", 19) + "|END",
		"set n 0 0|18446744073709551610 => STORED",
		"incr n 10 => 4",
		"set n 0 0|100 => STORED",
		"ma n MD D95 v => VA 1|5",
		"mg n v => VA 3|5  ",
		"incr n 995 => 1000",
		"mg n v s => VA 4 s4|1000",
	}},
	{"what counts as a number", []string{
		"set a 0 0|12 abc => STORED",
		"incr a 1 => 13",
		"get a => VALUE a 0 6|13" + strings.Repeat(" ", 4) + "|END",
		"set b 0 0|12abc => STORED",
		"incr b 1 => CLIENT_ERROR cannot increment or decrement non-numeric value",
		"set c 0 0|-0 => STORED",
		"incr c 1 => 1",
		"set d 0 0|-1 => STORED",
		"incr d 1 => CLIENT_ERROR cannot increment or decrement non-numeric value",
		"set e 0 0| \t+5 => STORED",
		"incr e 1 => 6",
		"set f 0 0|18446744073709551616 => STORED",
		"incr f 1 => CLIENT_ERROR cannot increment or decrement non-numeric value",
		"set g 0 0| => STORED",
		"incr g 1 => CLIENT_ERROR cannot increment or decrement non-numeric value",
		"set h 0 0|abc => STORED",
		"incr h 1 => CLIENT_ERROR cannot increment or decrement non-numeric value",
		"set i 0 0|- => STORED",
		"incr i 1 => CLIENT_ERROR cannot increment or decrement non-numeric value",
		"set j 0 0|-18446744073709551615 => STORED",
		"incr j 1 => 2",
		"set k 0 0|18446744073709551615 - => STORED",
		"incr k 0 => CLIENT_ERROR cannot increment or decrement non-numeric value",
		"set l 0 0|0005 => STORED",
		"incr l 1 => 6",
		"get l => VALUE l 0 4|6   |END",
		"set m 0 0|   => STORED",
		"incr m 1 => CLIENT_ERROR cannot increment or decrement non-numeric value",
		"ms big|" + "5" + strings.Repeat(" ", bigNum-1) + " => HD",
		"incr big 1 => 6",
		"ms big|" + "5" + strings.Repeat(" ", bigNum) + " => HD",
		"incr big 1 => CLIENT_ERROR cannot increment or decrement non-numeric value",
	}},
	{"ma with cas", []string{
		"set n 0 0|5 => STORED",
		"ma n C9 => EX",
		"ma n C1 v c => VA 1 c2|6",
		"ma n C0 v c => VA 1 c3|7",
		"set s 0 0|x => STORED",
		"ma s C99 => EX",
		"set e 0 0| => STORED",
		"ma e C99 => CLIENT_ERROR cannot increment or decrement non-numeric value",
	}},
	{"ma ttl in place and replaced", []string{
		"set n 0 0|98 => STORED",
		"ma n T100 t v => VA 2 t100|99",
		"mg n t v => VA 2 t100|99",
		"set m 0 0|9 => STORED",
		"ma m T100 t v => VA 2 t100|10",
		"mg m t v => VA 2 t-1|10",
		"ma m T-1 => HD",
		"mg m => EN",
	}},
	{"ma vivify", []string{
		"ma n N0 J7 v c t => VA 1 c1 t-1|7",
		"ma n N0 J7 v c => VA 1 c2|8",
		"ma z C5 N30 J1 v t => VA 1 t30|1",
		"mg z f t v => VA 1 f0 t30|1",
		"ma y MD N0 J0 v => VA 1|0",
		"ma y MD v => VA 1|0",
	}},
	{"too large", []string{
		"set k 0 0|old => STORED",
		"ms k|" + strings.Repeat("a", maxValue1+1) + " => SERVER_ERROR object too large for cache",
		"mg k => EN",
		"ms k|" + strings.Repeat("a", maxValue1) + " => HD",
		"mg k s => HD s1048516",
		"ms k F1|" + strings.Repeat("a", maxValue1-3) + " => SERVER_ERROR object too large for cache",
		"ms k F1|" + strings.Repeat("a", maxValue1-4) + " => HD",
		"set k 0 0|b => STORED",
		"append k 0 0|" + strings.Repeat("a", maxValue1) + " => NOT_STORED",
		"mg k v => VA 1|b",
	}},
	{"text get takes no win token", []string{
		"ms k T100|v => HD",
		"md k I => HD",
		"get k => VALUE k 0 1|v|END",
		"gets k => VALUE k 0 1 2|v|END",
		"gat 50 k => VALUE k 0 1|v|END",
		"touch k 50 => TOUCHED",
		"mg k v t => VA 1 t50 X W|v",
		"mg k v => VA 1 Z X|v",
		"get k => VALUE k 0 1|v|END",
	}},
	{"too large drops the old item for ms and set only", []string{
		"set k 0 0|old => STORED",
		"append k 0 0|" + tooBig + " => SERVER_ERROR object too large for cache",
		"prepend k 0 0|" + tooBig + " => SERVER_ERROR object too large for cache",
		"add k 0 0|" + tooBig + " => SERVER_ERROR object too large for cache",
		"replace k 0 0|" + tooBig + " => SERVER_ERROR object too large for cache",
		"cas k 0 0 1|" + tooBig + " => SERVER_ERROR object too large for cache",
		"mg k v => VA 3|old",
		"set k 0 0|" + tooBig + " => SERVER_ERROR object too large for cache",
		"mg k => EN",
		"set k 0 0|old => STORED",
		"ms k MA|" + tooBig + " => SERVER_ERROR object too large for cache",
		"mg k => EN",
		"set k 0 0|old => STORED",
		"ms k ME|" + tooBig + " => SERVER_ERROR object too large for cache",
		"mg k => EN",
		"set k 0 0|old => STORED",
		"ms k C3|" + tooBig + " => SERVER_ERROR object too large for cache",
		"mg k => EN",
	}},
	{"flush_all now", []string{
		"set a 0 0|1 => STORED",
		"set b 0 100|2 => STORED",
		"flush_all => OK",
		"mg a => EN",
		"get b => END",
		"set c 0 0|3 => STORED",
		"mg c v c => VA 1 c4|3",
		"flush_all 0 => OK",
		"mg c => EN",
		"ms d c|4 => HD c6",
		"flush_all -1 => OK",
		"mg d => EN",
	}},
	{"flush_all delayed", []string{
		"set a 0 0|1 => STORED",
		"flush_all 10 => OK",
		"mg a v => VA 1|1",
		"sleep 5",
		"set b 0 0|2 => STORED",
		"mg a v => VA 1|1",
		"sleep 4",
		// memcached's cut-off is the second before the requested moment.
		"mg a => EN",
		"mg b => EN",
		"set c 0 0|3 => STORED",
		"mg c => EN",
		"sleep 1",
		"set d 0 0|4 => STORED",
		"mg d v => VA 1|4",
		"sleep 100",
		"mg d v => VA 1|4",
	}},
	{"flush_all at an absolute time", []string{
		"set a 0 0|1 => STORED",
		"flush_all {now+3} => OK",
		"sleep 1",
		"mg a => HD",
		"sleep 1",
		"mg a => EN",
	}},
	{"flush_all then store in the same second", []string{
		"set a 0 0|1 => STORED",
		"flush_all => OK",
		"set a 0 0|2 => STORED",
		"add b 0 0|3 => STORED",
		"mg a v => VA 1|2",
		"mg b v => VA 1|3",
		"sleep 5",
		"mg a v => VA 1|2",
	}},
}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			clk := newClock(clockStart)
			s, err := New(Config{Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			for n, step := range sc.steps {
				if d, ok := strings.CutPrefix(step, "sleep "); ok {
					sec, _ := strconv.ParseInt(d, 10, 64)
					clk.advance(sec)
					continue
				}
				cmd, want := splitStep(t, step)
				p := parseStep(t, cmd, clk.Now())
				op := tiers.Op{Req: p.req}
				s.Do(&op)
				if got := reply(p, &op.Res); got != want {
					t.Fatalf("step %d %s\n got %q\nwant %q", n, short(cmd), got, want)
				}
			}
		})
	}
}

func splitStep(t testing.TB, step string) (cmd, want string) {
	cmd, want, ok := strings.Cut(step, " => ")
	if !ok {
		t.Fatalf("step %q has no reply", short(step))
	}
	return cmd, want
}

func short(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%s...(%d bytes)", s[:60], len(s))
	}
	return s
}
