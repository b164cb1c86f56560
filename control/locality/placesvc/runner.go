package placesvc

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/control/internal/runloop"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/tickgrid"
)

// RunnerStore is what a Runner needs of the store.
type RunnerStore interface {
	store.Reader
	store.Writer
	store.Watcher
	store.Sessions
	store.Elections
}

// Runner is the thin shell of the placement service: it campaigns, and
// while it leads it feeds a Leader with what the store's prefixes say
// (create requests, counter batches, acks, capacity reports, pins, manual
// requests) and
// runs a Round every Tick. Deposed, it campaigns again.
//
// Goroutines: Start starts one (campaign and rounds) and, while leading,
// one per followed prefix; Stop ends them all and resigns.
type Runner struct {
	cfg    Config
	st     RunnerStore
	layout locsvc.Layout

	cur atomic.Pointer[Leader] // the leader state while leading
	// pastMu guards past, the totals of earlier leaderships, and orders
	// a leadership's end (its totals added, cur cleared) with Stats, so
	// a scrape never counts a leader twice or misses it.
	pastMu   sync.Mutex
	past     Totals
	onEvents func([]Event)

	loop *runloop.Loop
}

// NewRunner builds a runner; Start runs it. onEvents, if not nil, is
// called on the runner's goroutine with what each step did.
func NewRunner(cfg Config, st RunnerStore, onEvents func([]Event)) (*Runner, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, st: st, layout: locsvc.NewLayout(cfg.Prefix), onEvents: onEvents, loop: runloop.New()}, nil
}

// Start runs the runner until Stop.
func (r *Runner) Start() { r.loop.Start(r.run) }

// Stop ends the runner, bounded by ctx. Idempotent.
func (r *Runner) Stop(ctx context.Context) error { return r.loop.Stop(ctx) }

// Leading returns the leader state while this runner leads, else nil.
func (r *Runner) Leading() *Leader { return r.cur.Load() }

// Stats are the runner's figures for metrics.
type Stats struct {
	Leading bool
	// InFlight: moves in flight (while leading).
	InFlight int
	// Totals over every leadership of this process: moves finished
	// (Settled), and the leaders' decisions, moves started, returns and
	// moves held by the rate cap.
	Totals
}

// Stats returns the runner's figures.
func (r *Runner) Stats() Stats {
	r.pastMu.Lock()
	defer r.pastMu.Unlock()
	st := Stats{Totals: r.past}
	if ld := r.cur.Load(); ld != nil {
		st.Leading, st.InFlight, st.Totals = true, ld.InFlight(), st.Totals.plus(ld.Totals())
	}
	return st
}

func (r *Runner) run(ctx context.Context) {
	for ctx.Err() == nil {
		sess, err := r.st.NewSession(ctx, r.cfg.SessionTTL)
		if err != nil {
			pause(ctx, r.cfg.Tick)
			continue
		}
		lead, err := r.st.Campaign(ctx, sess, locsvc.ElectionName, r.cfg.Candidate)
		if err != nil {
			_ = sess.Close()
			pause(ctx, r.cfg.Tick)
			continue
		}
		r.cfg.Logger.Info("placement service leads", "candidate", r.cfg.Candidate)
		if err := r.lead(ctx, lead); err != nil && ctx.Err() == nil {
			r.cfg.Logger.Warn("placement service stopped leading", "err", err)
		}
		rctx, cancel := context.WithTimeout(context.Background(), r.cfg.Timeout)
		_ = lead.Resign(rctx)
		cancel()
		_ = sess.Close()
	}
}

// update is one watch batch of one followed prefix.
type update struct {
	prefix string
	b      store.Batch
}

// lead runs one leadership: recover the journal, follow the prefixes,
// round every Tick, until the leadership or ctx ends.
func (r *Runner) lead(ctx context.Context, lead store.Leadership) error {
	ld, err := NewLeader(r.cfg, r.st, lead)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Acks first, read whole: a round must not promote a move before it
	// knows every live member.
	c, ccancel := context.WithTimeout(ctx, r.cfg.Timeout)
	rows, rev, err := r.st.List(c, r.layout.AcksPrefix())
	ccancel()
	if err != nil {
		return err
	}
	acks := map[string]store.Row{}
	store.ApplyBatch(acks, store.Batch{Reset: true, Changes: changes(rows)})
	r.applyAcks(ld, acks)
	evs, err := ld.Recover(ctx, r.cfg.Now())
	if err != nil {
		return err
	}
	r.emit(evs)
	if err := r.adoptWaiting(ctx, ld); err != nil {
		return err
	}
	r.cur.Store(ld)
	defer func() {
		r.pastMu.Lock()
		r.past = r.past.plus(ld.Totals())
		r.cur.Store(nil)
		r.pastMu.Unlock()
	}()

	updates := make(chan update)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	follow := func(prefix string, from int64) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := r.st.Watch(prefix, from)
			defer w.Close()
			for {
				b, err := w.Next(ctx)
				if err != nil {
					cancel() // a prefix not followed: campaign again from scratch
					return
				}
				select {
				case updates <- update{prefix, b}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	follow(r.layout.AcksPrefix(), rev+1)
	caps := map[string]store.Row{}
	follow(r.layout.CapacityPrefix(), 0)
	for _, p := range []string{r.layout.CreatePrefix(), r.layout.CountersPrefix(), r.layout.PinsPrefix(), r.layout.RulePinsPrefix(), r.layout.MigratePrefix()} {
		follow(p, 0)
	}

	// Rounds run on the process's timer grid while the leader has work;
	// idle (Leader.Idle) the ticker stops and the next update starts it
	// again, so the rounds that do something run on the same ticks as
	// before.
	tick := tickgrid.NewTicker(r.cfg.Tick)
	ticks := tick.C
	defer func() { tick.Stop() }()
	var lastWarn time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-lead.Done():
			return errors.New("leadership lost")
		case u := <-updates:
			if ticks == nil {
				tick = tickgrid.NewTicker(r.cfg.Tick)
				ticks = tick.C
			}
			if u.prefix == r.layout.AcksPrefix() {
				store.ApplyBatch(acks, u.b)
				r.applyAcks(ld, acks)
				continue
			}
			if u.prefix == r.layout.CapacityPrefix() {
				store.ApplyBatch(caps, u.b)
				r.applyCapacities(ld, caps)
				continue
			}
			if err := r.dispatch(ctx, ld, u); err != nil {
				return err
			}
		case <-ticks:
			evs, err := ld.Round(ctx, r.cfg.Now())
			r.emit(evs)
			if err == nil && ld.Idle() {
				tick.Stop()
				ticks = nil
			}
			if errors.Is(err, store.ErrFenced) {
				return err
			}
			if err != nil && ctx.Err() == nil && time.Since(lastWarn) >= 10*time.Second {
				// A store that is down fails every round: say so every
				// ten seconds, not ten times a second.
				r.cfg.Logger.Warn("placement round", "err", err)
				lastWarn = time.Now()
			}
		}
	}
}

func changes(rows []store.Row) []store.Change {
	out := make([]store.Change, len(rows))
	for i, row := range rows {
		out[i] = store.Change{Row: row}
	}
	return out
}

// applyAcks hands the leader the live members' acks (a row that does not
// parse counts as revision 0: that member holds moves up until it acks).
func (r *Runner) applyAcks(ld *Leader, rows map[string]store.Row) {
	live := map[string]int64{}
	for key, row := range rows {
		m := strings.TrimPrefix(key, r.layout.AcksPrefix())
		rev, err := strconv.ParseInt(string(row.Value), 10, 64)
		if err != nil {
			rev = 0
		}
		live[m] = rev
	}
	ld.SetMembers(live, r.cfg.Now())
}

// applyCapacities hands the leader the live members' capacity reports; a
// row that does not parse is left out (and logged): that member's region
// then counts as without a report, never as full.
func (r *Runner) applyCapacities(ld *Leader, rows map[string]store.Row) {
	reports := make([]locsvc.Capacity, 0, len(rows))
	for key, row := range rows {
		c, err := locsvc.DecodeCapacity(row.Value)
		if err != nil {
			r.cfg.Logger.Warn("locality capacity", "key", key, "err", err)
			continue
		}
		reports = append(reports, c)
	}
	ld.SetCapacities(reports)
}

// adoptWaiting hands the leader the manual requests a predecessor kept
// waiting (outcomes/ rows of result Waiting): the request itself was
// consumed, and lived on only in that leader's memory and in the row.
// The next round decides on them again (and writes their outcome anew).
func (r *Runner) adoptWaiting(ctx context.Context, ld *Leader) error {
	c, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	rows, _, err := r.st.List(c, r.layout.OutcomesPrefix())
	cancel()
	if err != nil {
		return err
	}
	for _, row := range rows {
		o, err := locsvc.DecodeOutcome(row.Value)
		if err != nil {
			r.cfg.Logger.Warn("locality move outcome", "key", row.Key, "err", err)
			continue
		}
		if o.Result == locsvc.Waiting {
			ld.Manual(strings.TrimPrefix(row.Key, r.layout.OutcomesPrefix()), o.To)
		}
	}
	return nil
}

// dispatch hands one batch of a followed prefix to the leader.
func (r *Runner) dispatch(ctx context.Context, ld *Leader, u update) error {
	now := r.cfg.Now()
	for _, c := range u.b.Changes {
		name := strings.TrimPrefix(c.Row.Key, u.prefix)
		switch u.prefix {
		case r.layout.CreatePrefix():
			if c.Deleted {
				continue
			}
			ev, err := ld.Create(ctx, name, string(c.Row.Value), now)
			if errors.Is(err, store.ErrFenced) {
				return err
			}
			if err != nil {
				r.cfg.Logger.Warn("locality create", "mushard", name, "err", err)
				continue
			}
			if ev.Kind != "" {
				r.emit([]Event{ev})
			}
		case r.layout.CountersPrefix():
			if c.Deleted {
				ld.ForgetCounts(c.Row.Key)
				continue
			}
			b, err := locsvc.DecodeBatch(c.Row.Value)
			if err != nil {
				r.cfg.Logger.Warn("locality counters", "key", c.Row.Key, "err", err)
				continue
			}
			ld.Counts(c.Row.Key, c.Row.ModRevision, b, now)
		case r.layout.PinsPrefix():
			ld.SetPin(name, pinValue(c))
		case r.layout.RulePinsPrefix():
			ld.SetRulePin(name, pinValue(c))
		case r.layout.MigratePrefix():
			if c.Deleted {
				continue
			}
			ld.Manual(name, string(c.Row.Value))
			dctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
			_, err := store.FencedTxn(dctx, r.st, ld.l, []store.Cond{store.IfModRevision(c.Row.Key, c.Row.ModRevision)}, []store.Op{store.Delete(c.Row.Key)})
			cancel()
			if errors.Is(err, store.ErrFenced) {
				return err
			}
		}
	}
	return nil
}

func pinValue(c store.Change) string {
	if c.Deleted {
		return ""
	}
	return string(c.Row.Value)
}

func (r *Runner) emit(evs []Event) {
	for _, e := range evs {
		r.cfg.Logger.Info("locality", "event", e.Kind, "mushard", e.Name, "epoch", e.Epoch, "to", e.To, "reason", e.Reason)
	}
	if r.onEvents != nil && len(evs) > 0 {
		r.onEvents(evs)
	}
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
