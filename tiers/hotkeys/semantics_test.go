package hotkeys

import (
	"errors"
	"strconv"
	"testing"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/layered"
)

// rig is the tier over real embedded stores (they answer within Do, so
// every call below is complete when it returns).
type rig struct {
	t      *testing.T
	tier   *Tier
	l1, l2 *embedded.Store
	now    int64
}

func newRig(t *testing.T, rules ...Rule) *rig {
	t.Helper()
	rg := &rig{t: t}
	rg.l1, rg.l2 = twoStores(t)
	var err error
	lay, err := layered.New(layered.Config{Threshold: 1}, rg.l1, rg.l2, inline{})
	if err != nil {
		t.Fatal(err)
	}
	rg.tier, err = New(Config{Rules: rules, Now: func() int64 { return rg.now }, Sample: 1}, Deps{Inner: lay, L1: rg.l1, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	return rg
}

// twoStores returns an L1 and an L2: real embedded stores, which answer
// within Do.
func twoStores(t *testing.T) (l1, l2 *embedded.Store) {
	t.Helper()
	var err error
	if l1, err = embedded.New(embedded.Config{MaxBytes: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	if l2, err = embedded.New(embedded.Config{MaxBytes: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	return l1, l2
}

// inline is the executor of tests that drive the tiers from one
// goroutine: a resumed write runs at once.
type inline struct{}

func (inline) Run(_ int, fn func()) { fn() }

func (rg *rig) do(tier tiers.Tier, req tiers.Request) tiers.Result {
	rg.t.Helper()
	done := false
	op := &tiers.Op{Req: req, Done: func(*tiers.Op) { done = true }}
	tier.Do(op)
	if !done {
		rg.t.Fatalf("%+v: not done within Do", req)
	}
	return op.Res
}

func (rg *rig) set(key, val string) tiers.Result {
	return rg.do(rg.tier, tiers.Request{Kind: tiers.KindSet, Key: []byte(key), Value: []byte(val), Text: true})
}

func (rg *rig) get(key string) (string, bool) {
	r := rg.do(rg.tier, tiers.Request{Kind: tiers.KindGet, Key: []byte(key), WantValue: true, WantFlags: true, Text: true})
	if r.Status == tiers.StatusError {
		rg.t.Fatalf("get %s: %v", key, r.Err)
	}
	return string(r.Value), r.Status == tiers.StatusHit
}

func (rg *rig) arith(key string, mode tiers.Mode, d uint64) tiers.Result {
	return rg.do(rg.tier, tiers.Request{Kind: tiers.KindArith, Mode: mode, Key: []byte(key), Delta: d, Text: true})
}

func (rg *rig) mustCount(key string, want uint64) {
	rg.t.Helper()
	v, ok := rg.get(key)
	if !ok || v != strconv.FormatUint(want, 10) {
		rg.t.Fatalf("get %s = %q (hit %v), want %d", key, v, ok, want)
	}
}

// parts counts the sub-keys of key present in the L2 store.
func (rg *rig) parts(key string, k int) int {
	n := 0
	for c := 0; c < k; c++ {
		r := rg.do(rg.l2, tiers.Request{Kind: tiers.KindGet, Key: appendSubKey(nil, []byte(key), c), WantValue: true})
		if r.Status == tiers.StatusHit {
			n++
		}
	}
	return n
}

func TestCounterSemantics(t *testing.T) {
	rg := newRig(t, Rule{Prefix: "votes:", Kind: KindCounter, Split: 4})
	// incr of an absent counter: NOT_FOUND, nothing created.
	if r := rg.arith("votes:1", tiers.ModeIncr, 1); r.Status != tiers.StatusMiss && r.Status != tiers.StatusNotFound {
		t.Fatalf("incr absent: %v", r.Status)
	}
	if _, ok := rg.get("votes:1"); ok {
		t.Fatal("absent counter reads as present")
	}
	rg.set("votes:1", "10")
	for i := 1; i <= 8; i++ {
		r := rg.arith("votes:1", tiers.ModeIncr, 2)
		if r.Status != tiers.StatusStored || string(r.Value) != strconv.Itoa(10+2*i) {
			t.Fatalf("incr %d: %v %q, want %d", i, r.Status, r.Value, 10+2*i)
		}
	}
	rg.mustCount("votes:1", 26)
	rg.mustCount("votes:1", 26)
	if n := rg.parts("votes:1", 4); n != 4 {
		t.Fatalf("increments landed on %d parts, want 4", n)
	}
	// Reads of a split key go to the tier of record: with every L2 hit
	// promoted, L1 still holds neither the base key nor a part.
	for c := -1; c < 4; c++ {
		k := []byte("votes:1")
		if c >= 0 {
			k = appendSubKey(nil, k, c)
		}
		if r := rg.do(rg.l1, tiers.Request{Kind: tiers.KindGet, Key: k, WantValue: true}); r.Status == tiers.StatusHit {
			t.Fatalf("L1 holds %q", k)
		}
	}
	// decr larger than any one part takes from several; below zero stops at 0.
	if r := rg.arith("votes:1", tiers.ModeDecr, 20); string(r.Value) != "6" {
		t.Fatalf("decr 20: %v %q, want 6", r.Status, r.Value)
	}
	rg.mustCount("votes:1", 6)
	if r := rg.arith("votes:1", tiers.ModeDecr, 100); string(r.Value) != "0" {
		t.Fatalf("decr past zero: %q, want 0", r.Value)
	}
	rg.mustCount("votes:1", 0)
	if r := rg.arith("votes:1", tiers.ModeIncr, 3); string(r.Value) != "3" {
		t.Fatalf("incr after floor: %q, want 3", r.Value)
	}
	// set replaces the whole counter; delete removes every part.
	rg.set("votes:1", "100")
	rg.mustCount("votes:1", 100)
	if n := rg.parts("votes:1", 4); n != 0 {
		t.Fatalf("%d parts left after set", n)
	}
	rg.arith("votes:1", tiers.ModeIncr, 1)
	rg.arith("votes:1", tiers.ModeIncr, 1)
	if r := rg.do(rg.tier, tiers.Request{Kind: tiers.KindDelete, Key: []byte("votes:1")}); r.Status != tiers.StatusStored {
		t.Fatalf("delete: %v", r.Status)
	}
	if _, ok := rg.get("votes:1"); ok || rg.parts("votes:1", 4) != 0 {
		t.Fatal("delete left parts behind")
	}
	// gets folds the value and answers FoldedCAS; a cas with that token
	// answers EXISTS, any other CAS a client error (CLIENT_ERROR).
	rg.set("votes:2", "1")
	rg.arith("votes:2", tiers.ModeIncr, 2)
	r := rg.do(rg.tier, tiers.Request{Kind: tiers.KindGet, Key: []byte("votes:2"), WantValue: true, WantCAS: true})
	if r.Status != tiers.StatusHit || string(r.Value) != "3" || r.CAS != FoldedCAS {
		t.Fatalf("gets on a split counter: %v %q cas %d", r.Status, r.Value, r.CAS)
	}
	r = rg.do(rg.tier, tiers.Request{Kind: tiers.KindSet, Key: []byte("votes:2"), Value: []byte("5"), HasCompareCAS: true, CompareCAS: FoldedCAS})
	if r.Status != tiers.StatusExists {
		t.Fatalf("cas with the folded token: %v %v", r.Status, r.Err)
	}
	var ce tiers.ClientError
	r = rg.do(rg.tier, tiers.Request{Kind: tiers.KindSet, Key: []byte("votes:2"), Value: []byte("5"), HasCompareCAS: true, CompareCAS: 1})
	if !errors.As(r.Err, &ce) {
		t.Fatalf("cas on a split counter: %v %v", r.Status, r.Err)
	}
	r = rg.do(rg.tier, tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Delta: 1, Key: []byte("votes:2"), WantCAS: true})
	if !errors.As(r.Err, &ce) {
		t.Fatalf("ma with c on a split counter: %v %v", r.Status, r.Err)
	}
	rg.mustCount("votes:2", 3)
	// A key under no rule is untouched.
	rg.set("other", "7")
	if r := rg.arith("other", tiers.ModeIncr, 1); string(r.Value) != "8" {
		t.Fatalf("plain incr: %q", r.Value)
	}
}

// TestCounterAdaptiveNoLoss: a counter under an adaptive rule starts
// unsplit (increments on the base key), gets marked and split, then cools
// down and unsplits; no increment is lost at any step.
func TestCounterAdaptiveNoLoss(t *testing.T) {
	rg := newRig(t, Rule{Prefix: "c:", Kind: KindCounter, Split: 4, Adaptive: true})
	rg.set("c:hot", "0")
	want := uint64(0)
	step := func(n int, dt int64) {
		for i := 0; i < n; i++ {
			rg.now += dt
			rg.arith("c:hot", tiers.ModeIncr, 1)
			want++
		}
	}
	step(100, int64(1e6)) // 1000/s for 0.1s: below the default rate of 1000/s after decay
	if rg.parts("c:hot", 4) != 0 {
		t.Fatal("split before it was hot")
	}
	step(20_000, int64(1e5)) // 10,000/s for 2 s
	if !rg.tier.isMarked([]byte("c:hot")) {
		t.Fatalf("not marked after 2 s at 10,000/s; hot keys %+v", rg.tier.HotKeys())
	}
	step(400, int64(1e5))
	if rg.parts("c:hot", 4) == 0 {
		t.Fatal("marked but not split")
	}
	rg.mustCount("c:hot", want)
	// Silence past the hold, then slow increments: the mark expires.
	rg.now += int64(2 * rg.tier.cfg.Hold)
	step(50, int64(1e8))
	if rg.tier.isMarked([]byte("c:hot")) {
		t.Fatal("still marked after cooling down")
	}
	rg.mustCount("c:hot", want)
	if hk := rg.tier.HotKeys(); len(hk) != 0 {
		t.Errorf("hot keys after cooling: %+v", hk)
	}
}

// TestAdaptiveSplitsAtTheFirstScan: a counter at 1.5× the rate is marked
// by the scan one second after its first access (the decayed count over a
// long-tracked key's window would take eight seconds there), and one at
// 0.9× is not marked in three seconds.
func TestAdaptiveSplitsAtTheFirstScan(t *testing.T) {
	for _, c := range []struct {
		perSec, n int
		marked    bool
	}{{1500, 1520, true}, {900, 2700, false}} {
		rg := newRig(t, Rule{Prefix: "c:", Kind: KindCounter, Split: 4, Adaptive: true})
		rg.set("c:hot", "0")
		for range c.n {
			rg.now += int64(1e9) / int64(c.perSec)
			rg.arith("c:hot", tiers.ModeIncr, 1)
		}
		if got := rg.tier.isMarked([]byte("c:hot")); got != c.marked {
			t.Errorf("%d/s for %.2f s (rate %v): marked %v, want %v; hot keys %+v",
				c.perSec, float64(c.n)/float64(c.perSec), rg.tier.cfg.Rate, got, c.marked, rg.tier.HotKeys())
		}
	}
}

func TestListSemantics(t *testing.T) {
	rg := newRig(t, Rule{Prefix: "feed:", Kind: KindList, Split: 3})
	if r := rg.do(rg.tier, tiers.Request{Kind: tiers.KindSet, Mode: tiers.ModeAppend, Key: []byte("feed:1"), Value: []byte("x")}); r.Status != tiers.StatusNotStored {
		t.Fatalf("append to an absent list: %v", r.Status)
	}
	rg.set("feed:1", "[")
	seen := map[string]int{}
	for i := 0; i < 30; i++ {
		tok := "<" + strconv.Itoa(i) + ">"
		mode := tiers.ModeAppend
		if i%5 == 0 {
			mode = tiers.ModePrepend
		}
		if r := rg.do(rg.tier, tiers.Request{Kind: tiers.KindSet, Mode: mode, Key: []byte("feed:1"), Value: []byte(tok)}); r.Status != tiers.StatusStored {
			t.Fatalf("append %d: %v", i, r.Status)
		}
	}
	v, _ := rg.get("feed:1")
	for i := 0; i < 30; i++ {
		seen["<"+strconv.Itoa(i)+">"] = 0
	}
	for j := 0; j < len(v); {
		k := j
		for k < len(v) && v[k] != '>' {
			k++
		}
		if v[j] == '[' {
			j++
			continue
		}
		seen[v[j:k+1]]++
		j = k + 1
	}
	for tok, n := range seen {
		if n != 1 {
			t.Errorf("token %s appears %d times in %q", tok, n, v)
		}
	}
	if rg.parts("feed:1", 3) != 3 {
		t.Error("appends did not spread over the parts")
	}
	rg.set("feed:1", "new")
	if v, _ := rg.get("feed:1"); v != "new" {
		t.Errorf("after set: %q", v)
	}
}

func TestReadCopies(t *testing.T) {
	rg := newRig(t, Rule{Prefix: "celeb:", Kind: KindRead, Split: 4})
	rg.set("celeb:1", "v1")
	for conn := uint64(1); conn <= 16; conn++ {
		op := &tiers.Op{Req: tiers.Request{Kind: tiers.KindGet, Key: []byte("celeb:1"), WantValue: true, Text: true}, Conn: conn, Done: func(*tiers.Op) {}}
		rg.tier.Do(op)
		if string(op.Res.Value) != "v1" {
			t.Fatalf("read through copy: %q", op.Res.Value)
		}
	}
	copies := func(val string) int {
		n := 0
		for c := 0; c < 4; c++ {
			r := rg.do(rg.l1, tiers.Request{Kind: tiers.KindGet, Key: appendSubKey(nil, []byte("celeb:1"), c), WantValue: true})
			if r.Status == tiers.StatusHit && string(r.Value) == val {
				n++
			}
		}
		return n
	}
	if n := copies("v1"); n < 2 {
		t.Fatalf("16 connections filled %d copies", n)
	}
	rg.set("celeb:1", "v2")
	if n := copies("v1"); n != 0 {
		t.Fatalf("%d copies still serve the old value after a set", n)
	}
	if v, _ := rg.get("celeb:1"); v != "v2" {
		t.Fatalf("read after set: %q", v)
	}
	if s := rg.tier.Stats(); s.CopyHits == 0 || s.Fills == 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestSpread(t *testing.T) {
	p := placerFunc(func(k []byte) string { return "s" + strconv.FormatUint(uint64(len(k)*7+int(k[len(k)-1]))%4, 10) })
	got := spread(nil, []byte("votes:9"), 8, p, nil)
	count := map[string]int{}
	for _, c := range got {
		count[p.ServerFor(appendSubKey(nil, []byte("votes:9"), c))]++
	}
	for s, n := range count {
		if n != 2 {
			t.Errorf("server %s has %d of 8 parts: %v", s, n, count)
		}
	}
}

type placerFunc func([]byte) string

func (f placerFunc) ServerFor(k []byte) string { return f(k) }

func TestRulesValidate(t *testing.T) {
	bad := [][]Rule{
		{{Prefix: "", Kind: KindCounter, Split: 2}},
		{{Prefix: "a", Kind: KindCounter, Split: 1}},
		{{Prefix: "a", Kind: KindCounter, Split: MaxSplit + 1}},
		{{Prefix: "a", Kind: 0, Split: 2}},
		{{Prefix: "a", Kind: KindList, Split: 2}, {Prefix: "a", Kind: KindRead, Split: 2}},
	}
	for _, rules := range bad {
		if err := ValidateRules(rules); err == nil {
			t.Errorf("%+v accepted", rules)
		}
	}
	rs, err := newRuleSet([]Rule{{Prefix: "a", Kind: KindList, Split: 2}, {Prefix: "ab", Kind: KindRead, Split: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rs.match([]byte("abc")); r == nil || r.Prefix != "ab" {
		t.Errorf("longest prefix: %+v", r)
	}
	if r := rs.match([]byte("b")); r != nil {
		t.Errorf("no prefix: %+v", r)
	}
}

// TestQuietIncr: an incr whose reply nobody reads is one sub-operation,
// and still creates its part when the counter exists.
func TestQuietIncr(t *testing.T) {
	rg := newRig(t, Rule{Prefix: "votes:", Kind: KindCounter, Split: 4})
	rg.set("votes:q", "5")
	for i := 0; i < 8; i++ {
		before := rg.tier.Stats().SubOps
		r := rg.do(rg.tier, tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("votes:q"), Delta: 1, NoReply: true})
		if r.Status != tiers.StatusStored {
			t.Fatalf("quiet incr %d: %v", i, r.Status)
		}
		if n := rg.tier.Stats().SubOps - before; i >= 4 && n != 1 {
			t.Fatalf("quiet incr %d took %d sub-operations, want 1", i, n)
		}
	}
	rg.mustCount("votes:q", 13)
	if r := rg.do(rg.tier, tiers.Request{Kind: tiers.KindArith, Mode: tiers.ModeIncr, Key: []byte("votes:none"), Delta: 1, NoReply: true}); r.Status == tiers.StatusStored {
		t.Fatal("quiet incr of an absent counter stored")
	}
}

// TestNewNeedsLoops: a tier that resumes writes on event loops is refused
// without them when it is built, not found out when a write has nowhere
// to resume.
func TestNewNeedsLoops(t *testing.T) {
	inner, _ := embedded.New(embedded.Config{})
	if _, err := New(Config{}, Deps{Inner: inner}); err == nil {
		t.Fatal("New without loops: no error")
	}
}
