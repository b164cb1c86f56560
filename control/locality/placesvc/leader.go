package placesvc

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

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
	// Manual: the event answers an operator's manual request (Manual);
	// its outcome is recorded in the store (locsvc.Outcome).
	Manual bool
	// Until: for a refusal that keeps the request ("return_wait"), when
	// the leader decides on it again.
	Until time.Time
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
// Methods are safe for concurrent use. No lock is held across a store
// call: a method that writes reads what it needs of the state under mu,
// decides, makes its store calls without mu, and takes mu again only to
// record what they did. So the readers (Counters, InFlight, Settled,
// Capacities: the admin API and the metrics) and the setters the Runner
// feeds never wait behind a round's etcd round trips, only behind
// another method's short critical section.
type Leader struct {
	cfg    Config
	st     Store
	l      store.Leadership
	table  *loctable.Table
	layout locsvc.Layout

	// step serializes Recover and Round, the methods that change moves,
	// bucket and settled from what they read of the store: one at a
	// time, what a round read of them is not changed by another while it
	// waits on the store. It is held across store calls; mu never is,
	// and no reader or setter takes step. Order: step before mu.
	step sync.Mutex

	mu sync.Mutex // guards everything below; never held across a store call
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
	caps []locsvc.Capacity
	// buckets: the rate cap of each ordered pair of regions (from, to).
	buckets map[[2]string]placement.Bucket
	// shifts: the claims of each ordered pair of regions (claimant,
	// owner), counted at decisions (claimLocked).
	shifts map[[2]string]placement.Shift
	// rateLimited counts decisions to move held back by their pair's cap.
	rateLimited uint64
	// returns counts moves back to a region the μ-shard left less than
	// MinInterval + MaxTTL before: thrash, which the policy should keep
	// near zero.
	returns uint64
	// decided counts decisions taken (one per μ-shard due at a round),
	// movesStarted the moves written (their Prepare), settled those
	// finished.
	decided, movesStarted, settled uint64
	pruned                         time.Time
}

type muShard struct {
	counters map[string]placement.Decayed
	// visits: the batches naming it, by region, as separate visits
	// (placement.LocalityPolicy.Visit); nil until the first.
	visits      map[string]placement.Visits
	firstRemote time.Time
	// owner is the owner this leader last read or wrote in the row (""
	// until then). Only the leader changes owners, so while it leads it
	// is the row's; it lets a round skip the read of a μ-shard whose
	// counts cannot move it (hopeless).
	owner string
	// left is the region the μ-shard last moved away from, as of owner
	// ("" for none): a move back there asks less evidence.
	left string
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
		buckets: map[[2]string]placement.Bucket{}, shifts: map[[2]string]placement.Shift{},
	}
	return ld, nil
}

func (ld *Leader) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, ld.cfg.Timeout)
}

// Create makes the row of a μ-shard a strata of region asked for and
// removes the request. Its owner is the region its own pin or its rule's
// pin names, when that region is known: no region has served the μ-shard
// yet, so starting it there spares a move the pin would make at once.
// Otherwise it is the asking region. A row already there stays.
//
// The pins are read under the lock, the writes made outside it.
func (ld *Leader) Create(ctx context.Context, name, region string, now time.Time) (Event, error) {
	owner := region
	ld.mu.Lock()
	if pin := firstNonEmpty(ld.pins[name], ld.rulePinLocked(name)); pin != "" && ld.cfg.knows(pin) {
		owner = pin
	}
	ld.mu.Unlock()
	c, cancel := ld.ctx(ctx)
	defer cancel()
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
		if c.N > 0 || c.Remote {
			if sh.visits == nil {
				sh.visits = map[string]placement.Visits{}
			}
			sh.visits[b.Region] = ld.cfg.Policy.Visit(sh.visits[b.Region], at)
		}
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
// the policy's (a pin elsewhere refuses it; the rate cap paces it). The
// round that decides on it records the outcome in outcomes/<name>:
// refused, waiting (return_wait, kept until it may return) or started.
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

// RateLimited is the number of decisions to move that waited on the rate
// cap of their pair of regions (a μ-shard held back for several rounds
// counts at each).
func (ld *Leader) RateLimited() uint64 {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.rateLimited
}

// Decided is the number of decisions this leader took (μ-shards due
// at a round, each decided once per round).
func (ld *Leader) Decided() uint64 {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.decided
}

// Returns is the number of moves this leader started back to a region
// the μ-shard had left less than MinInterval + MaxTTL before.
func (ld *Leader) Returns() uint64 {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.returns
}

// Settled is the number of moves this leader finished.
func (ld *Leader) Settled() uint64 {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.settled
}

// Totals are a leader's counts since it began to lead, for metrics.
type Totals struct {
	// Decided: decisions taken (Leader.Decided). Started: moves written
	// (their Prepare), pins' and manual requests' included. Returns:
	// those back to a region the μ-shard left less than MinInterval +
	// MaxTTL before (Leader.Returns). RateLimited: decisions to move held
	// by their pair's cap (Leader.RateLimited). Settled: moves finished.
	Decided, Started, Returns, RateLimited, Settled uint64
}

func (t Totals) plus(o Totals) Totals {
	return Totals{Decided: t.Decided + o.Decided, Started: t.Started + o.Started, Returns: t.Returns + o.Returns,
		RateLimited: t.RateLimited + o.RateLimited, Settled: t.Settled + o.Settled}
}

// Totals returns the leader's counts, read together.
func (ld *Leader) Totals() Totals {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return Totals{Decided: ld.decided, Started: ld.movesStarted, Returns: ld.returns, RateLimited: ld.rateLimited, Settled: ld.settled}
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
