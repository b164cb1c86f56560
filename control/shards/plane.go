package shards

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// PlaneConfig is the control plane of one process over its managed tiers:
// the settings every tier's agent and runner share.
type PlaneConfig struct {
	// Candidate names this process among the agents and candidates.
	Candidate string
	// Lead runs a leader runner per tier (this process campaigns).
	Lead bool
	// Agent and Runner are the shared part of each tier's configs; the
	// Plane fills in the tier's own fields (Tier, ID, Shards, Members,
	// Initial, SettleHold, Candidate, Logger).
	Agent  AgentConfig
	Runner RunnerConfig
	// Logger takes the agents' and leaders' events, with the tier's name.
	Logger *slog.Logger
}

// ManagedTier is one tier the Plane manages.
type ManagedTier struct {
	Name string
	// Pool is this process's pool of the tier; nil where it has no data
	// plane (strata control), and then the tier gets no agent.
	Pool    Pool
	Shards  int
	Initial *shardmap.Map
	Members []shardmap.Server
	// Settle is the pools' fill lease TTL, the least a move stays in
	// settle (every strata reads the same file, so the same value).
	Settle time.Duration
	// Compat: the pools start on a compat layout (LeaderConfig.Compat);
	// ToLayout: they convert to another (LeaderConfig.ToLayout).
	Compat, ToLayout bool
}

// Plane is the shard-assignment control plane of one process: an agent per
// managed tier that has a pool here and, when it leads, a runner per
// managed tier, over one store client it owns.
//
// Goroutines: the agents' and runners' own; Start starts them, Stop ends
// the runners first (resigning, so a standby takes over at once), then the
// agents (revoking their leases), then closes the store client.
type Plane struct {
	st      store.Store
	agents  []*Agent
	runners map[string]*Runner // by tier
	view    *View
	managed map[string]bool // the tiers it manages, by name; fixed at build
}

// NewPlane builds the Plane for tiers over st, which it owns from the call
// on (on error it has closed it). Nothing runs until Start.
func NewPlane(cfg PlaneConfig, st store.Store, tiers []ManagedTier) (*Plane, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Plane{st: st, runners: map[string]*Runner{}, managed: map[string]bool{}}
	info := map[string]TierInfo{}
	for _, t := range tiers {
		p.managed[t.Name] = true
		var addrs []string
		for _, m := range t.Members {
			addrs = append(addrs, m.Addr)
		}
		info[t.Name] = TierInfo{Shards: t.Shards, Members: addrs, Compat: t.Compat}
		tlog := log.With("component", "control", "tier", t.Name)
		if t.Pool != nil {
			ac := cfg.Agent
			ac.Tier, ac.ID, ac.Shards, ac.Logger = t.Name, cfg.Candidate, t.Shards, tlog
			ag, err := NewAgent(ac, st, t.Pool)
			if err != nil {
				_ = st.Close()
				return nil, err
			}
			p.agents = append(p.agents, ag)
		}
		if cfg.Lead {
			rc := cfg.Runner
			rc.Candidate = cfg.Candidate
			rc.Leader.Tier, rc.Leader.Shards, rc.Leader.Members, rc.Leader.Initial = t.Name, t.Shards, t.Members, t.Initial
			rc.Leader.SettleHold, rc.Leader.Logger, rc.Leader.Compat, rc.Leader.ToLayout = t.Settle, tlog, t.Compat, t.ToLayout
			r, err := NewRunner(rc, st)
			if err != nil {
				_ = st.Close()
				return nil, err
			}
			p.runners[t.Name] = r
		}
	}
	p.view = NewView(st, info)
	return p, nil
}

// Manages reports whether the Plane publishes tier's shard map (false on
// a nil Plane): the admin page asks only those tiers for a map.
func (p *Plane) Manages(tier string) bool { return p != nil && p.managed[tier] }

// View is the admin API's view of the managed tiers.
func (p *Plane) View() *View { return p.view }

// Start starts the agents, then the runners.
func (p *Plane) Start() {
	for _, a := range p.agents {
		a.Start()
	}
	for _, r := range p.runners {
		r.Start()
	}
}

// Stop ends the runners (resigning), the agents (revoking their leases)
// and closes the store client, within ctx.
func (p *Plane) Stop(ctx context.Context) error {
	var errs []error
	for _, r := range p.runners {
		errs = append(errs, r.Stop(ctx))
	}
	for _, a := range p.agents {
		errs = append(errs, a.Stop(ctx))
	}
	errs = append(errs, p.st.Close())
	return errors.Join(errs...)
}

// SetMembers makes a reloaded server list the membership of tier: the
// leader (if this process leads) reconciles it at its next round, and the
// admin API accepts drains of the new members.
func (p *Plane) SetMembers(tier string, members []shardmap.Server) {
	addrs := make([]string, len(members))
	for i, m := range members {
		addrs[i] = m.Addr
	}
	if r := p.runners[tier]; r != nil {
		r.SetMembers(members)
	}
	p.view.SetMembers(tier, addrs)
}
