package shards

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/control/internal/runloop"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/tickgrid"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// RunnerStore is what a Runner needs of the store.
type RunnerStore interface {
	store.ReadWriter
	store.Watcher
	store.Sessions
	store.Elections
}

// RunnerConfig configures the shell around a tier's Leader.
type RunnerConfig struct {
	Leader LeaderConfig
	// Candidate names this process in the election row.
	Candidate string
	// ProbeInterval is the round period: a probe of every member, then a
	// Round.
	ProbeInterval time.Duration
	// ProbeTimeout bounds one probe or flush.
	ProbeTimeout time.Duration
	SessionTTL   int
}

// Runner is the thin shell of a tier's leader loop: it campaigns, and while
// it leads it probes every member and runs a Round each ProbeInterval.
// Deposed (a fenced write, or the leadership's Done), it campaigns again.
//
// Goroutines: Start starts one (plus, while leading, the watch of the
// tier's rows, and a probe goroutine per member per round, joined within
// the round); Stop ends them and resigns.
type Runner struct {
	cfg RunnerConfig
	st  RunnerStore
	log *slog.Logger

	mu      sync.Mutex // guards members
	members []shardmap.Server

	loop *runloop.Loop
}

// NewRunner builds a runner; Start runs it.
func NewRunner(cfg RunnerConfig, st RunnerStore) (*Runner, error) {
	if cfg.ProbeInterval <= 0 || cfg.ProbeTimeout <= 0 || cfg.SessionTTL < 1 {
		return nil, errors.New("shards: runner needs a probe interval, a probe timeout and a session ttl")
	}
	if cfg.Leader.Logger == nil {
		cfg.Leader.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Runner{cfg: cfg, st: st, log: cfg.Leader.Logger, loop: runloop.New()}
	r.members = append([]shardmap.Server(nil), cfg.Leader.Members...)
	return r, nil
}

// Start runs the runner until Stop.
func (r *Runner) Start() { r.loop.Start(r.run) }

// Stop ends the runner, bounded by ctx. Idempotent.
func (r *Runner) Stop(ctx context.Context) error { return r.loop.Stop(ctx) }

func (r *Runner) run(ctx context.Context) {
	tier := r.cfg.Leader.Tier
	for ctx.Err() == nil {
		sess, err := r.st.NewSession(ctx, r.cfg.SessionTTL)
		if err != nil {
			sleepCtx(ctx, r.cfg.ProbeInterval)
			continue
		}
		lead, err := r.st.Campaign(ctx, sess, ElectionName(tier), r.cfg.Candidate)
		if err != nil {
			_ = sess.Close()
			sleepCtx(ctx, r.cfg.ProbeInterval)
			continue
		}
		r.log.Info("shard loop leads", "tier", tier, "candidate", r.cfg.Candidate)
		r.lead(ctx, lead)
		rctx, cancel := context.WithTimeout(context.Background(), r.cfg.ProbeTimeout)
		_ = lead.Resign(rctx)
		cancel()
		_ = sess.Close()
		r.log.Info("shard loop stopped leading", "tier", tier)
	}
}

// lead runs rounds until the leadership ends or ctx does.
func (r *Runner) lead(ctx context.Context, lead store.Leadership) {
	wire := Wire{Timeout: r.cfg.ProbeTimeout}
	l, err := NewLeader(r.cfg.Leader, r.st, lead, wire)
	if err != nil {
		r.log.Error("shard loop", "err", err)
		return
	}
	probes := newKeptProbes(wire)
	defer probes.close()
	// The watch of the tier's rows tells the rounds whether to read them
	// again: an idle tier's rows do not change, and reading them every
	// round was an idle leader's main cost.
	var tw tierWatch
	wctx, wcancel := context.WithCancel(ctx)
	watching := make(chan struct{})
	go func() { defer close(watching); r.watchTier(wctx, &tw) }()
	defer func() { wcancel(); <-watching }()
	// On the process's timer grid: the rounds share their wake-ups with
	// the other periodic work. A timer the loop re-arms (nextRound), not
	// a tickgrid.Ticker, whose ticks a goroutine of its own hands over:
	// one thread more woken every round.
	due := time.Now()
	tick := time.NewTimer(0)
	defer tick.Stop()
	for {
		members := r.memberList()
		l.SetMembers(members)
		addrs := make([]string, len(members))
		for i, m := range members {
			addrs[i] = m.Addr
		}
		// Taken before the read: a change after it marks the next round.
		ob := Observation{Probe: probes.probeAll(ctx, addrs), Unchanged: tw.unchanged()}
		ob.Now = time.Now()
		if _, err := l.Round(ctx, ob); err != nil {
			if errors.Is(err, store.ErrFenced) {
				return
			}
			if ctx.Err() == nil {
				r.log.Warn("shard round", "tier", r.cfg.Leader.Tier, "err", err)
			}
		}
		var wait time.Duration
		due, wait = nextRound(due, time.Now(), r.cfg.ProbeInterval)
		tick.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-lead.Done():
			return
		case <-tick.C:
		}
	}
}

// nextRound is when the next periodic step falls, and the wait for it
// from now, for a loop whose last step was due at due: due itself while
// it is still ahead (the loop woke early, for something else), else the
// next multiple of period on the grid after it. A step that overran that
// runs at once, as a ticker's kept tick would, and the one after falls
// on the grid again.
func nextRound(due, now time.Time, period time.Duration) (time.Time, time.Duration) {
	if due.After(now) {
		return due, due.Sub(now)
	}
	if next := due.Add(tickgrid.Until(due, period)); next.After(now) {
		return next, next.Sub(now)
	}
	return now, 0
}

// tierWatch is what the Runner's watch of the tier's rows says.
type tierWatch struct {
	live    atomic.Bool // the watch is delivering (its first batch came)
	changed atomic.Bool // a batch came since the last unchanged
}

// unchanged reports whether no row changed since its previous call, and
// takes the changes: never while no watch delivers.
func (t *tierWatch) unchanged() bool {
	c := t.changed.Swap(false)
	return t.live.Load() && !c
}

// watchTier follows the tier's rows into tw until ctx ends. A watch from
// revision 0 starts with the whole prefix, so a change made while no
// watch ran counts as a change.
func (r *Runner) watchTier(ctx context.Context, tw *tierWatch) {
	for ctx.Err() == nil {
		w := r.st.Watch(tierPrefix(r.cfg.Leader.Tier), 0)
		for {
			if _, err := w.Next(ctx); err != nil {
				break
			}
			tw.changed.Store(true)
			tw.live.Store(true)
		}
		tw.live.Store(false)
		tw.changed.Store(true)
		w.Close()
		sleepCtx(ctx, r.cfg.ProbeInterval)
	}
}

func (r *Runner) memberList() []shardmap.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]shardmap.Server(nil), r.members...)
}

// SetMembers replaces the tier's server list (a reload); the leader
// reconciles it at its next round: a new server enters returning (flushed
// before it owns shards), a removed one's shards fail over.
func (r *Runner) SetMembers(list []shardmap.Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.members = append([]shardmap.Server(nil), list...)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
