package placesvc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement"
)

// Store is what a Leader needs of the store.
type Store interface {
	store.Reader
	store.Writer
}

// Event is one thing a Leader did (or refused), for logs and tests.
type Event struct {
	Name string
	// Kind: "created", "prepare", "migrating", "stable", "refused".
	Kind  string
	Epoch uint64
	// To is the destination of a move, or the owner of a created row.
	To     string
	Reason string
}

func (e Event) String() string {
	return fmt.Sprintf("%s %s e%d %s %s", e.Kind, e.Name, e.Epoch, e.To, e.Reason)
}

// Leader is the placement service while it leads: its state and the
// decisions it takes, driven by its Runner (or a test) with the time as
// an argument. Every write is fenced on the leadership.
//
// State in memory (counters, first remote accesses, the decisions due,
// the acks) is rebuilt by a successor from the store's prefixes; only
// delayed decisions are lost with it. The moves in flight are in the
// journal, which Recover reads.
//
// Methods are safe for concurrent use (one lock, held across the store
// calls of a method: a round is short).
type Leader struct {
	cfg    Config
	st     Store
	l      store.Leadership
	table  *loctable.Table
	layout locsvc.Layout

	mu sync.Mutex // guards everything below
	// shards: what the counters told about each μ-shard.
	shards map[string]*muShard
	// due: μ-shards to decide on, not before the time given.
	due map[string]time.Time
	// moves: migrations in flight, by name. Invariant: a name is here
	// iff its journal entry exists and this leader has read it.
	moves map[string]*move
	// acks: members' applied revisions: the live ones, and those whose
	// lease ended less than FenceAfter ago (lapsed).
	acks map[string]int64
	// lapsed: when each member whose lease ended stops counting.
	lapsed map[string]time.Time
	// started: when this leader recovered; with FenceAfter no step of a
	// move is taken before started + FenceAfter.
	started time.Time
	// counted: the revision of each counter row already merged, so a
	// re-delivered row (a watch reset) is not counted twice.
	counted  map[string]int64
	pins     map[string]string
	rulePins map[string]string
	// ruleDue: rule prefixes whose pin changed: their μ-shards are due.
	ruleDue map[string]bool
	manual  map[string]string
	// caps: the members' capacity reports (RegionCapacities judges them
	// at each round).
	caps    []locsvc.Capacity
	bucket  placement.Bucket
	settled uint64
	pruned  time.Time
}

type muShard struct {
	counters    map[string]placement.Decayed
	firstRemote time.Time
}

// move is a migration in flight.
type move struct {
	epoch uint64
	state loctable.State
	// rev: the revision of the last write of the move (Prepare, then
	// Migrating), which every live member must have applied before the
	// next step.
	rev int64
	// since: when the destination started serving (this leader's view).
	since time.Time
}

// NewLeader returns the leader state of leadership l; Recover it before
// the first Round.
func NewLeader(cfg Config, st Store, l store.Leadership) (*Leader, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ld := &Leader{
		cfg: cfg, st: st, l: l, table: loctable.New(st, cfg.Prefix), layout: locsvc.NewLayout(cfg.Prefix),
		shards: map[string]*muShard{}, due: map[string]time.Time{}, moves: map[string]*move{},
		acks: map[string]int64{}, lapsed: map[string]time.Time{}, counted: map[string]int64{}, pins: map[string]string{},
		rulePins: map[string]string{}, ruleDue: map[string]bool{}, manual: map[string]string{},
	}
	return ld, nil
}

func (ld *Leader) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, ld.cfg.Timeout)
}

// Recover reads the journal and takes every unfinished move over: one in
// Prepare waits for the acks of its Prepare write again, one Migrating
// gets a whole grace window from now, one already settled loses its
// journal entry. Moves are rolled forward, never back: the destination
// may have served (and been written) already.
func (ld *Leader) Recover(ctx context.Context, now time.Time) ([]Event, error) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.started = now
	c, cancel := ld.ctx(ctx)
	pending, err := ld.table.Journal(c)
	cancel()
	if err != nil {
		return nil, err
	}
	var evs []Event
	for _, p := range pending {
		c, cancel := ld.ctx(ctx)
		e, rev, ok, err := ld.table.Read(c, p.Name)
		cancel()
		if err != nil {
			return evs, err
		}
		switch {
		case !ok || e.State == loctable.Stable || e.Epoch != p.Epoch:
			c, cancel := ld.ctx(ctx)
			_, err := ld.table.DropJournal(c, ld.l, p.Name)
			cancel()
			if err != nil {
				return evs, err
			}
		case e.State == loctable.Prepare:
			ld.moves[p.Name] = &move{epoch: e.Epoch, state: loctable.Prepare, rev: rev}
			evs = append(evs, Event{Name: p.Name, Kind: "recovered", Epoch: e.Epoch, To: e.Owner, Reason: "prepare"})
		default:
			ld.moves[p.Name] = &move{epoch: e.Epoch, state: loctable.Migrating, rev: rev, since: now}
			evs = append(evs, Event{Name: p.Name, Kind: "recovered", Epoch: e.Epoch, To: e.Owner, Reason: "migrating"})
		}
	}
	return evs, nil
}

// Create makes the row of a μ-shard a strata of region asked for and
// removes the request. Its owner is the region its own pin or its rule's
// pin names, when that region is known: no region has served the μ-shard
// yet, so starting it there spares a move the pin would make at once.
// Otherwise it is the asking region. A row already there stays.
func (ld *Leader) Create(ctx context.Context, name, region string, now time.Time) (Event, error) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	c, cancel := ld.ctx(ctx)
	defer cancel()
	owner := region
	if pin := firstNonEmpty(ld.pins[name], ld.rulePinLocked(name)); pin != "" && ld.cfg.knows(pin) {
		owner = pin
	}
	del := store.Delete(ld.layout.CreateKey(name))
	e, created, err := ld.table.Create(c, ld.l, name, owner, now, del)
	if err != nil {
		return Event{}, err
	}
	if !created { // the row was there: the request still goes
		_, err := store.FencedTxn(c, ld.st, ld.l, nil, []store.Op{del})
		return Event{}, err
	}
	return Event{Name: name, Kind: "created", Epoch: e.Epoch, To: e.Owner}, nil
}

// Counts merges one counter row (key, written at rev) into the μ-shards'
// decayed counts, as of the batch's time (never later than now). The
// μ-shards with a remote access become due for a decision, once each
// however many batches name them.
func (ld *Leader) Counts(key string, rev int64, b locsvc.Batch, now time.Time) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	if ld.counted[key] >= rev {
		return
	}
	ld.counted[key] = rev
	at := b.At
	if at.After(now) {
		at = now
	}
	hl := ld.cfg.Policy.HalfLife
	for _, c := range b.Counts {
		sh := ld.shards[c.Name]
		if sh == nil {
			sh = &muShard{counters: map[string]placement.Decayed{}}
			ld.shards[c.Name] = sh
		}
		sh.counters[b.Region] = sh.counters[b.Region].Add(at, float64(c.N), hl)
		if c.Remote {
			if sh.firstRemote.IsZero() {
				sh.firstRemote = at
			}
			if _, ok := ld.due[c.Name]; !ok {
				ld.due[c.Name] = time.Time{}
			}
		}
	}
}

// ForgetCounts drops the record of a counter row that was deleted.
func (ld *Leader) ForgetCounts(key string) {
	ld.mu.Lock()
	delete(ld.counted, key)
	ld.mu.Unlock()
}

// SetAck records member's applied revision; rev < 0 removes the member
// (its lease ended: it holds nothing up any more — at once, whatever
// FenceAfter; SetMembers is the runner's way).
func (ld *Leader) SetAck(member string, rev int64) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	delete(ld.lapsed, member)
	if rev < 0 {
		delete(ld.acks, member)
		return
	}
	ld.acks[member] = rev
}

// SetMembers replaces the live members' applied revisions, as of now. A
// member that was live and is not any more (its lease ended) keeps its
// last revision, and holds moves up, until now + FenceAfter: it may
// still serve on its view that long.
func (ld *Leader) SetMembers(live map[string]int64, now time.Time) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	for m := range live {
		delete(ld.lapsed, m) // back: it counts as live again
	}
	if ld.cfg.FenceAfter > 0 {
		for m, rev := range ld.acks {
			if _, ok := live[m]; ok {
				continue
			}
			if _, ok := ld.lapsed[m]; !ok {
				ld.lapsed[m] = now.Add(ld.cfg.FenceAfter)
			}
			live[m] = rev
		}
	}
	ld.acks = live
}

// SetCapacities replaces the members' capacity reports: the next rounds
// keep μ-shards from moving to a region they say is full.
func (ld *Leader) SetCapacities(reports []locsvc.Capacity) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.caps = append(ld.caps[:0:0], reports...)
}

// Capacities is what the members' capacity reports say of each region
// as of now, as the rounds judge them.
func (ld *Leader) Capacities(now time.Time) []RegionCapacity {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return RegionCapacities(ld.cfg.Regions, ld.caps, now, ld.cfg.CapacityMaxAge, ld.cfg.CapacityCeiling)
}

// SetPin records the operator's pin of name ("" unpins); the μ-shard is
// due for a decision.
func (ld *Leader) SetPin(name, region string) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	setOrDelete(ld.pins, name, region)
	ld.due[name] = time.Time{}
}

// SetRulePin records the pin of a whole rule ("" unpins); every μ-shard
// of the rule is due at the next round.
func (ld *Leader) SetRulePin(prefix, region string) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	setOrDelete(ld.rulePins, prefix, region)
	ld.ruleDue[prefix] = true
}

// Manual asks for one move of name to region, through the same path as
// the policy's (a pin elsewhere refuses it; the rate cap paces it).
func (ld *Leader) Manual(name, region string) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	ld.manual[name] = region
	ld.due[name] = time.Time{}
}

func setOrDelete(m map[string]string, k, v string) {
	if v == "" {
		delete(m, k)
	} else {
		m[k] = v
	}
}

// Round advances the moves in flight (Prepare → Migrating once every live
// member acknowledged the Prepare write; Migrating → Stable after the
// grace window and once every live member acknowledged the Migrating
// write) and then decides on the μ-shards due, in name order. It
// returns what it did; an error wrapping store.ErrFenced means the
// leadership is lost.
func (ld *Leader) Round(ctx context.Context, now time.Time) ([]Event, error) {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	var evs []Event
	for _, name := range sortedKeys(ld.moves) {
		ev, err := ld.advanceLocked(ctx, name, now)
		if err != nil {
			return evs, err
		}
		if ev.Kind != "" {
			evs = append(evs, ev)
		}
	}
	if err := ld.expandRulesLocked(ctx); err != nil {
		return evs, err
	}
	regions := regionStates(RegionCapacities(ld.cfg.Regions, ld.caps, now, ld.cfg.CapacityMaxAge, ld.cfg.CapacityCeiling))
	for _, name := range sortedKeys(ld.due) {
		if ld.due[name].After(now) {
			continue
		}
		if _, busy := ld.moves[name]; busy {
			continue // decided again once settled, if still due
		}
		ev, err := ld.decideLocked(ctx, name, regions, now)
		if err != nil {
			return evs, err
		}
		if ev.Kind != "" {
			evs = append(evs, ev)
		}
	}
	ld.pruneLocked(now)
	return evs, nil
}

// advanceLocked takes one step of the move of name, if its wait is over.
func (ld *Leader) advanceLocked(ctx context.Context, name string, now time.Time) (Event, error) {
	m := ld.moves[name]
	c, cancel := ld.ctx(ctx)
	defer cancel()
	switch m.state {
	case loctable.Prepare:
		if !ld.ackedLocked(m.rev, now) {
			return Event{}, nil
		}
		e, rev, err := ld.table.PromoteAt(c, ld.l, name, m.epoch, now)
		if err != nil {
			return Event{}, ld.lostMoveLocked(name, err)
		}
		m.state, m.since, m.rev = loctable.Migrating, now, rev
		return Event{Name: name, Kind: "migrating", Epoch: m.epoch, To: e.Owner}, nil
	default:
		// The source must know it no longer serves before the
		// destination stops deleting there: a loop of the source still
		// in Prepare would serve a value written at the destination
		// since. So the Migrating write must be acknowledged too.
		if now.Sub(m.since) < ld.cfg.Grace || !ld.ackedLocked(m.rev, now) {
			return Event{}, nil
		}
		e, _, err := ld.table.Settle(c, ld.l, name, m.epoch)
		if err != nil {
			return Event{}, ld.lostMoveLocked(name, err)
		}
		delete(ld.moves, name)
		ld.settled++
		return Event{Name: name, Kind: "stable", Epoch: m.epoch, To: e.Owner}, nil
	}
}

// lostMoveLocked handles a failed step: the leadership lost is the
// caller's; a row that moved on (another leader finished the move) ends
// the move here; anything else is retried next round.
func (ld *Leader) lostMoveLocked(name string, err error) error {
	switch {
	case errors.Is(err, store.ErrFenced):
		return err
	case errors.Is(err, loctable.ErrEpoch):
		delete(ld.moves, name)
		return nil
	}
	ld.cfg.Logger.Warn("locality move", "mushard", name, "err", err)
	return nil
}

// ackedLocked: every member still counted at now applied rev (vacuously
// true with none), and this leader has led FenceAfter. A lapsed member
// whose wait is over is forgotten here.
func (ld *Leader) ackedLocked(rev int64, now time.Time) bool {
	if !ld.started.IsZero() && now.Before(ld.started.Add(ld.cfg.FenceAfter)) {
		return false
	}
	for m, a := range ld.acks {
		if until, ok := ld.lapsed[m]; ok && !now.Before(until) {
			delete(ld.acks, m)
			delete(ld.lapsed, m)
			continue
		}
		if a < rev {
			return false
		}
	}
	return true
}

// expandRulesLocked makes every μ-shard of a rule whose pin changed due.
func (ld *Leader) expandRulesLocked(ctx context.Context) error {
	for _, prefix := range sortedKeys(ld.ruleDue) {
		c, cancel := ld.ctx(ctx)
		rows, _, err := ld.st.List(c, ld.table.Key(prefix+" "))
		cancel()
		if err != nil {
			return err
		}
		for _, r := range rows {
			if name, ok := ld.table.Name(r.Key); ok {
				ld.due[name] = time.Time{}
			}
		}
		delete(ld.ruleDue, prefix)
	}
	return nil
}

// decideLocked runs placement.Decide for name over regions and starts the
// move it chooses.
func (ld *Leader) decideLocked(ctx context.Context, name string, regions []placement.RegionState, now time.Time) (Event, error) {
	c, cancel := ld.ctx(ctx)
	defer cancel()
	e, _, ok, err := ld.table.Read(c, name)
	if err != nil {
		return Event{}, err
	}
	manual, hasManual := ld.manual[name]
	delete(ld.manual, name)
	if !ok || e.State != loctable.Stable {
		delete(ld.due, name)
		if hasManual {
			return Event{Name: name, Kind: "refused", To: manual, Reason: "not_stable"}, nil
		}
		return Event{}, nil
	}
	sh := ld.shards[name]
	if sh == nil {
		sh = &muShard{counters: map[string]placement.Decayed{}}
	}
	ms := placement.MuShardState{
		Owner: e.Owner, Counters: sh.counters, LastMigration: lastMigration(e.History),
		FirstRemote: sh.firstRemote, Pin: ld.pins[name], RulePin: ld.rulePinLocked(name),
	}
	if hasManual {
		if pin := firstNonEmpty(ms.Pin, ms.RulePin); pin != "" && pin != manual {
			delete(ld.due, name)
			return Event{Name: name, Kind: "refused", To: manual, Reason: "pinned to " + pin}, nil
		}
		if !ld.cfg.knows(manual) {
			delete(ld.due, name)
			return Event{Name: name, Kind: "refused", To: manual, Reason: "unknown region"}, nil
		}
		ms.Pin = manual
	}
	seed := ld.cfg.Seed ^ xxhash.Sum64String(name)
	d, bucket := placement.Decide(now, ld.cfg.Policy, regions, ms, ld.bucket, seed)
	if !d.Migrate {
		ld.bucket = bucket
		switch d.Reason {
		case placement.ReasonWaiting:
			ld.due[name] = sh.firstRemote.Add(ld.cfg.Policy.MigrateAfter)
		case placement.ReasonMinInterval:
			// Remote use is waiting for the interval to end: decide
			// then, whether or not more batches come.
			ld.due[name] = ms.LastMigration.Add(ld.cfg.Policy.MinInterval)
		case placement.ReasonRateLimited:
			ld.due[name] = now // the next round tries again
			if hasManual {
				ld.manual[name] = manual
			}
		default:
			delete(ld.due, name)
		}
		return Event{}, nil
	}
	if safe := ld.returnSafeAt(e.History, d.To); now.Before(safe) {
		// The μ-shard left d.To too recently: values it left there may
		// still live. Not even a pin may send it back before they
		// expire. The token is not spent.
		ld.due[name] = safe
		if hasManual {
			ld.manual[name] = manual
		}
		return Event{Name: name, Kind: "refused", To: d.To, Reason: "return_wait"}, nil
	}
	reason := d.Reason.String()
	if hasManual && ms.Pin == manual && ld.pins[name] != manual {
		reason = "manual"
	}
	next, rev, err := ld.table.Migrate(c, ld.l, name, e.Epoch, d.To, reason, now)
	if err != nil {
		if errors.Is(err, loctable.ErrEpoch) {
			return Event{}, nil // the row moved since the read: due stays
		}
		return Event{}, err
	}
	ld.bucket = bucket
	delete(ld.due, name)
	sh.firstRemote = time.Time{}
	ld.moves[name] = &move{epoch: next.Epoch, state: loctable.Prepare, rev: rev}
	return Event{Name: name, Kind: "prepare", Epoch: next.Epoch, To: d.To, Reason: reason}, nil
}

// returnSafeAt is when the μ-shard may move (back) to region to: the last
// time it left to, plus MaxTTL (every value written there before has
// expired) plus Grace (writes that reached to while the move away was
// being promoted). Zero when it never left to.
func (ld *Leader) returnSafeAt(h []loctable.Move, to string) time.Time {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].From == to {
			return h[i].At.Add(ld.cfg.Policy.MaxTTL + ld.cfg.Grace)
		}
	}
	return time.Time{}
}

// rulePinLocked is the pin of the longest rule prefix of name ("prefix
// field").
func (ld *Leader) rulePinLocked(name string) string {
	best, pin := -1, ""
	for p, r := range ld.rulePins {
		if strings.HasPrefix(name, p+" ") && len(p) > best {
			best, pin = len(p), r
		}
	}
	return pin
}

// pruneLocked forgets, once a half-life, the counts of μ-shards that
// decayed to nothing and have no decision due.
func (ld *Leader) pruneLocked(now time.Time) {
	hl := ld.cfg.Policy.HalfLife
	if now.Sub(ld.pruned) < hl {
		return
	}
	ld.pruned = now
	for name, sh := range ld.shards {
		if _, due := ld.due[name]; due {
			continue
		}
		live := false
		for _, d := range sh.counters {
			if d.Value(now, hl) >= 0.01 {
				live = true
				break
			}
		}
		if !live {
			delete(ld.shards, name)
		}
	}
}

// Counters returns name's decayed access counts by region as of now.
func (ld *Leader) Counters(name string, now time.Time) map[string]float64 {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	out := map[string]float64{}
	if sh := ld.shards[name]; sh != nil {
		for r, d := range sh.counters {
			out[r] = d.Value(now, ld.cfg.Policy.HalfLife)
		}
	}
	return out
}

// InFlight is the number of moves in flight; Settled the moves this
// leader finished.
func (ld *Leader) InFlight() int {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return len(ld.moves)
}

// Settled is the number of moves this leader finished.
func (ld *Leader) Settled() uint64 {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.settled
}

// lastMigration is when the μ-shard last changed owner; zero: never.
func lastMigration(h []loctable.Move) time.Time {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].From != "" {
			return h[i].At
		}
	}
	return time.Time{}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
