package hotkeys

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/fillguard"
)

// maxLoops bounds the event loops a Tier keeps state for; an Op from a
// higher loop index is served without detection.
const maxLoops = 256

// Deps are the tiers and services the hot-key tier works with.
type Deps struct {
	// Inner serves every request the rules do not match, and the base keys
	// and parts of counter and list keys (usually the L1/L2 layering).
	Inner tiers.Tier
	// L1 holds the copies of read-rule keys; nil makes read rules inert.
	L1 tiers.Tier
	// L2Placer and L1Placer spread parts (counter, list) and copies (read)
	// over servers; nil means the names 0..K-1.
	L2Placer, L1Placer Placer
	// Marks shares adaptive marks; nil keeps them in this process
	// (NewLocalMarks with Config.Hold).
	Marks MarkStore
	// Async says that Inner or L1 answers after Do returns (they are built
	// on memcached pools), so a split key's operations can be in flight
	// together and need ordering (see Phase).
	Async bool
	// Loops resumes a write delayed behind a copy fill on its own event
	// loop (the proxy's loop handle). Required.
	Loops Executor
}

// Executor runs fn on event loop `loop`, later and asynchronously.
type Executor interface {
	Run(loop int, fn func())
}

// copySlots and copySlotSeed size and seed the guard that keeps a read
// rule's copy fills from bringing back a value a write replaced.
const (
	copySlots    = 1024
	copySlotSeed = 0x6a09e667f3bcc908
)

// Tier splits hot keys over sub-keys and copies, in front of Inner. It is
// itself a tiers.Tier.
type Tier struct {
	cfg   Config
	inner tiers.Tier
	l1    tiers.Tier
	l2p   Placer
	l1p   Placer
	marks MarkStore

	rules  atomic.Pointer[ruleSet]
	marked atomic.Pointer[markSet] // the marks in force, refreshed by scans
	loops  [maxLoops]loopState
	guard  *fillguard.Guard // orders copy fills against writes of their keys
	fans   sync.Pool
	exec   Executor
	async  bool // the inner tier answers after Do returns

	bounded boundedTable // views of counters under bounded rules
	near    *nearCache   // values of hot keys of read rules with Near
	stats   counters
}

var _ tiers.Tier = (*Tier)(nil)

// New builds the tier. cfg.Rules may be empty (everything passes through
// until SetRules installs some).
func New(cfg Config, d Deps) (*Tier, error) {
	if d.Inner == nil {
		return nil, errors.New("hotkeys: an inner tier is required")
	}
	if d.Loops == nil {
		return nil, errors.New("hotkeys: an executor (the event loops) is required")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	rs, _ := newRuleSet(cfg.Rules)
	t := &Tier{cfg: cfg, inner: d.Inner, l1: d.L1, l2p: d.L2Placer, l1p: d.L1Placer, marks: d.Marks,
		guard: fillguard.New(copySlots, copySlotSeed), exec: d.Loops}
	if t.marks == nil {
		t.marks = NewLocalMarks(int64(cfg.Hold))
	}
	t.bounded.keys = map[string]*boundedKey{}
	t.near = newNearCache(cfg.NearBytes)
	t.rules.Store(rs)
	t.marked.Store(&markSet{})
	t.fans.New = func() any { return newFan(t) }
	t.async = d.Async
	return t, nil
}

// SetRules replaces the rules live (a reload). Keys whose rule goes away
// are read as plain keys from then on: counts kept in their parts are no
// longer added in (see doc.go for how to stop splitting safely).
func (t *Tier) SetRules(rules []Rule) error {
	rs, err := newRuleSet(rules)
	if err != nil {
		return err
	}
	t.rules.Store(rs)
	return nil
}

// Rules returns the rules in force, longest prefix first.
func (t *Tier) Rules() []Rule { return append([]Rule(nil), t.rules.Load().rules...) }

// Do routes op: keys under no rule, and flush_all, go to the inner tier
// unchanged; the others by their rule's kind.
func (t *Tier) Do(op *tiers.Op) {
	if op.Req.Kind == tiers.KindFlush {
		t.near.flush()
		t.inner.Do(op)
		return
	}
	r := t.rules.Load().match(op.Req.Key)
	if r == nil {
		t.inner.Do(op)
		return
	}
	write := isWrite(&op.Req)
	t.observe(op, r, write)
	active := !r.Adaptive || t.isMarked(op.Req.Key)
	switch r.Kind {
	case KindCounter:
		t.counter(op, r, active)
	case KindList:
		t.list(op, r, active)
	case KindRead:
		t.read(op, r, active, write)
	}
}

// isWrite tells writes (everything but a get without touch) from reads,
// for the detector. It is not tiers.Request.IsWrite on purpose: a touch
// or gat changes the item, so the detector counts it as a write, and a
// get with a lease (N, R) is a read of a hot key all the same.
func isWrite(r *tiers.Request) bool {
	return r.Kind != tiers.KindGet || r.HasTTL
}

// Phase orders requests within one client connection (see the proxy's
// phaser). Keys under no rule take the inner tier's phase. A split key's
// operation may take two rounds (a write to the base, then the parts), so
// of two requests on it the later must not overtake the earlier one:
// commuting writes (incr/decr of a counter, append/prepend of a list) are
// phase 1 and everything else on the key phase 2; for read rules, plain
// reads are phase 1 and everything else phase 2, as in the layering. When
// the inner tier answers within Do, nothing is in flight and no ordering
// is needed.
func (t *Tier) Phase(r *tiers.Request) uint8 {
	rule := t.rules.Load().match(r.Key)
	if rule == nil || r.Kind == tiers.KindFlush {
		return t.inner.Phase(r)
	}
	if !t.async {
		return 0
	}
	switch rule.Kind {
	case KindCounter:
		if r.Kind == tiers.KindArith {
			return 1
		}
	case KindList:
		if r.Kind == tiers.KindSet && (r.Mode == tiers.ModeAppend || r.Mode == tiers.ModePrepend) {
			return 1
		}
	case KindRead:
		if r.Kind == tiers.KindGet && !isWrite(r) {
			return 1
		}
	}
	return 2
}

// runOn runs fn on loop, through the executor New took.
func (t *Tier) runOn(loop int, fn func()) { t.exec.Run(loop, fn) }
