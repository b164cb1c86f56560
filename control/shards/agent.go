package shards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// Pool is the part of a managed pool an Agent drives. cmd/strata adapts
// tiers/memcached's Pool to it.
type Pool interface {
	// ApplyTopology makes t the topology in force unless the pool has a
	// newer one (an error wrapping shardmap.ErrStale).
	ApplyTopology(t shardmap.Topology) error
	// ShardLoad fills l with the per-shard counts since the pool
	// started, reusing the room of l's slices.
	ShardLoad(l *Load)
	// Unreachable lists the servers this pool holds down now.
	Unreachable() []string
}

// Load is a pool's traffic per shard since it started; index i is shard
// i. Its fields are tiers/memcached.ShardLoad's, so that a pool's adapter
// converts one into the other.
type Load struct {
	Requests []uint64
	Bytes    []uint64
	// Reads are the part of Requests that read; nil: the pool does not
	// count them.
	Reads []uint64
}

// AgentStore is what an Agent needs of the store.
type AgentStore interface {
	store.ReadWriter
	store.Watcher
	store.Sessions
}

// Report is an agent's row: what one strata tells the tier's leader.
type Report struct {
	ID string `json:"id"`
	// Applied is the highest map version the pool applied.
	Applied uint64 `json:"applied"`
	// Unreachable are the servers the pool holds down.
	Unreachable []string `json:"unreachable,omitempty"`
	// Requests and Bytes are per-shard rates per second over the last
	// report interval (empty before the second report).
	Requests []float64 `json:"requests,omitempty"`
	Bytes    []float64 `json:"bytes,omitempty"`
	// Reads is the part of Requests that read: the load shard scaling
	// spreads over read replicas.
	Reads []float64 `json:"reads,omitempty"`
}

// PutReport writes r as agent r.ID's row of tier, on lease.
func PutReport(ctx context.Context, w store.Writer, tier string, r Report, lease store.LeaseID) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Txn(ctx, nil, []store.Op{store.PutLease(agentsPrefix(tier)+r.ID, b, lease)})
	return err
}

// readReports lists the live agents' reports of tier; rows that do not
// decode are skipped (an agent of another version).
func readReports(ctx context.Context, r store.Reader, tier string) ([]Report, error) {
	rows, _, err := r.List(ctx, agentsPrefix(tier))
	if err != nil {
		return nil, err
	}
	out := make([]Report, 0, len(rows))
	for _, row := range rows {
		var rep Report
		if json.Unmarshal(row.Value, &rep) == nil {
			out = append(out, rep)
		}
	}
	return out, nil
}

// AgentConfig configures an Agent.
type AgentConfig struct {
	Tier string
	// ID names this strata among the tier's agents (unique per process).
	ID string
	// Shards is the tier's S.
	Shards int
	// ReportInterval is how often load and reachability are shipped.
	ReportInterval time.Duration
	// SessionTTL is the lease, in seconds: a dead strata stops counting
	// (for the leader's waits) this long after it died.
	SessionTTL int
	Logger     *slog.Logger
	// Now is the clock of the load rates (default time.Now).
	Now func() time.Time
}

// Agent runs in every strata whose tier is managed: it applies the
// published maps of the tier to the local pool (never an older one) and
// reports what the pool applied, the servers it cannot reach and its
// per-shard load.
//
// Goroutines: Start starts two, the watch loop and the report loop; Stop
// ends both and revokes the agent's lease.
type Agent struct {
	cfg  AgentConfig
	st   AgentStore
	pool Pool

	applied atomic.Uint64
	kick    chan struct{} // a map was applied: report now

	stopOnce sync.Once
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// NewAgent builds an agent; Start runs it.
func NewAgent(cfg AgentConfig, st AgentStore, pool Pool) (*Agent, error) {
	switch {
	case cfg.Tier == "" || cfg.ID == "":
		return nil, errors.New("shards: agent needs a tier and an id")
	case cfg.Shards < 1:
		return nil, fmt.Errorf("shards: agent of %d shards", cfg.Shards)
	case cfg.ReportInterval <= 0 || cfg.SessionTTL < 1:
		return nil, errors.New("shards: agent needs a report interval and a session ttl")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Agent{cfg: cfg, st: st, pool: pool, kick: make(chan struct{}, 1)}, nil
}

// Applied is the highest map version the pool applied through this agent.
func (a *Agent) Applied() uint64 { return a.applied.Load() }

// Start runs the agent until Stop.
func (a *Agent) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.wg.Add(2)
	go func() { defer a.wg.Done(); a.watchLoop(ctx) }()
	go func() { defer a.wg.Done(); a.reportLoop(ctx) }()
}

// Stop ends the agent's goroutines, bounded by ctx. Idempotent.
func (a *Agent) Stop(ctx context.Context) error {
	a.stopOnce.Do(func() {
		if a.cancel != nil {
			a.cancel()
		}
	})
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watchLoop applies every published version above the one applied.
func (a *Agent) watchLoop(ctx context.Context) {
	for ctx.Err() == nil {
		w := store.WatchVersioned(a.st, mapKey(a.cfg.Tier), a.applied.Load())
		for {
			v, err := w.Next(ctx)
			if err != nil {
				if ctx.Err() == nil {
					a.cfg.Logger.Warn("shard map watch", "tier", a.cfg.Tier, "err", err)
				}
				break
			}
			a.apply(v)
		}
		w.Close()
		a.wait(ctx, a.cfg.ReportInterval)
	}
}

func (a *Agent) apply(v store.Versioned) {
	p, err := Decode(v.Payload, a.cfg.Shards)
	if err == nil {
		var t shardmap.Topology
		if t, err = p.Topology(v.Version); err == nil {
			err = a.pool.ApplyTopology(t)
		}
	}
	switch {
	case err == nil, errors.Is(err, shardmap.ErrStale):
		// Stale: the pool holds this version or a newer one already.
		if v.Version > a.applied.Load() {
			a.applied.Store(v.Version)
		}
		select {
		case a.kick <- struct{}{}:
		default:
		}
	default:
		a.cfg.Logger.Error("shard map not applied", "tier", a.cfg.Tier, "version", v.Version, "err", err)
	}
}

// reportLoop keeps a session and writes the agent's row on it every
// interval and after every applied map.
func (a *Agent) reportLoop(ctx context.Context) {
	// On the process's timer grid, re-armed by the loop (see nextRound).
	due := time.Now()
	tick := time.NewTimer(0)
	defer tick.Stop()
	// The counts of this report and the last one, and the room of the
	// rates not on a written report (spare): the agent reuses them, so an
	// idle strata's reports allocate nothing per shard.
	var cur, prev Load
	var prevAt time.Time
	counted := false // prev holds a snapshot
	var spare Report
	for ctx.Err() == nil {
		sess, err := a.st.NewSession(ctx, a.cfg.SessionTTL)
		if err != nil {
			a.wait(ctx, a.cfg.ReportInterval)
			continue
		}
		// last is the report on the session's row (written): the row
		// lives with the lease, so an unchanged report is not put again.
		var last Report
		written := false
		for alive := true; alive; {
			rep := Report{ID: a.cfg.ID, Applied: a.applied.Load(), Unreachable: a.pool.Unreachable()}
			a.pool.ShardLoad(&cur)
			now := a.cfg.Now()
			if dt := now.Sub(prevAt).Seconds(); counted && dt > 0 {
				rep.Requests = rates(spare.Requests, cur.Requests, prev.Requests, dt)
				rep.Bytes = rates(spare.Bytes, cur.Bytes, prev.Bytes, dt)
				if cur.Reads != nil {
					rep.Reads = rates(spare.Reads, cur.Reads, prev.Reads, dt)
				}
				spare.Requests, spare.Bytes, spare.Reads = rep.Requests, rep.Bytes, rep.Reads
			}
			cur, prev, prevAt, counted = prev, cur, now, true
			if !written || !sameReport(last, rep) {
				if err := PutReport(ctx, a.st, a.cfg.Tier, rep, sess.Lease()); err != nil {
					written = false
					if ctx.Err() == nil {
						a.cfg.Logger.Warn("shard report", "tier", a.cfg.Tier, "err", err)
					}
				} else {
					// The rates written stay with last; the rates
					// it replaces are free to fill.
					last, spare, written = rep, last, true
				}
			}
			var wait time.Duration
			due, wait = nextRound(due, time.Now(), a.cfg.ReportInterval)
			tick.Reset(wait)
			select {
			case <-ctx.Done():
				alive = false
			case <-sess.Done():
				alive = false
			case <-tick.C:
			case <-a.kick:
			}
		}
		_ = sess.Close()
	}
}

// sameReport reports whether b says what a says: the same row, once
// encoded (nil and empty lists both encode to nothing). An idle strata's
// reports are all alike (the map it applied, nobody down, zero rates), and
// rewriting one would cost a store write and make the leader decode it
// again for nothing: the leader reads the row, not when it was written.
func sameReport(a, b Report) bool {
	return a.ID == b.ID && a.Applied == b.Applied && slices.Equal(a.Unreachable, b.Unreachable) &&
		slices.Equal(a.Requests, b.Requests) && slices.Equal(a.Bytes, b.Bytes) && slices.Equal(a.Reads, b.Reads)
}

// rates are per second, rounded to a tenth: the allocator needs no more,
// and short numbers keep a report of thousands of shards small in the
// store (a few bytes per shard). They are written in dst's room.
func rates(dst []float64, cur, prev []uint64, dt float64) []float64 {
	out := slices.Grow(dst[:0], len(cur))[:len(cur)]
	for i := range cur {
		out[i] = 0
		if i < len(prev) && cur[i] > prev[i] {
			out[i] = math.Round(float64(cur[i]-prev[i])/dt*10) / 10
		}
	}
	return out
}

// wait pauses a retry for d or until ctx ends.
func (a *Agent) wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
