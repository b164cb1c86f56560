package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/strata-cache/strata/control/shards"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// controlPlane is [control] composed: the store, an agent per managed pool
// of this strata and, when it campaigns, a leader runner per managed tier.
//
// Goroutines: the agents' and runners' own, started by start and ended by
// stop; then the store client closes.
type controlPlane struct {
	st      store.Store
	agents  []*shards.Agent
	runners map[string]*shards.Runner // by tier
	view    *shards.View
	managed map[string]bool // the tiers it manages, by name; fixed at build
}

// manages reports whether the control plane publishes tier's shard map
// (false on a nil plane): the admin page asks only those tiers for a map.
func (cp *controlPlane) manages(tier string) bool { return cp != nil && cp.managed[tier] }

// managedTier is one tier the control plane manages here.
type managedTier struct {
	name    string
	pool    *poolTier // nil in strata control: it has no data plane
	shards  int
	initial *shardmap.Map
	members []shardmap.Server
	// settle is the pools' fill lease TTL, the least a move stays in
	// settle (every strata reads the same file, so the same value).
	settle time.Duration
}

// managedTiers lists the tiers of s whose pool is managed; pools are this
// process's pools by tier name, or nil.
func managedTiers(s *settings, pools map[string]*poolTier, log *slog.Logger) ([]managedTier, error) {
	var out []managedTier
	for _, ts := range []tierSettings{s.L1, s.L2} {
		if ts.Kind != KindMemcached || !ts.Pool.Managed {
			continue
		}
		mt := managedTier{name: ts.Name, pool: pools[ts.Name]}
		pt := mt.pool
		if pt == nil {
			// No data plane here: an idle pool computes the pools' first
			// map exactly as theirs do. Its loops never serve, so it is
			// never started.
			idle, err := proxy.NewLoops(1)
			if err != nil {
				return nil, err
			}
			if pt, err = newPoolTier(ts, tierEnv{log: log, loops: idle}); err != nil {
				return nil, err
			}
			defer pt.close()
		}
		mt.shards, mt.initial, mt.settle = pt.shardCount(), pt.initialMap(), pt.p.MoveLeaseTTL()
		for _, sv := range ts.Servers {
			mt.members = append(mt.members, shardmap.Server{Addr: sv.Addr, Weight: sv.Weight})
		}
		out = append(out, mt)
	}
	return out, nil
}

// openStore connects the configured store: etcd, or memory.
func openStore(c controlSettings) (store.Store, error) {
	if len(c.Etcd) == 0 {
		return store.NewMemory(store.MemoryOptions{}).Connect(), nil
	}
	st, err := etcdstore.New(etcdstore.Config{Endpoints: c.Etcd})
	if err != nil {
		return nil, fmt.Errorf("control.etcd: %w", err)
	}
	return st, nil
}

// buildControl composes the control plane for tiers; agents only where a
// tier has a pool here, runners where this process campaigns. It returns
// nil when no tier is managed or the file has no [control].
func buildControl(c controlSettings, tiers []managedTier, candidate string, log *slog.Logger) (*controlPlane, error) {
	if len(tiers) == 0 || !c.Enabled {
		return nil, nil
	}
	if len(c.Etcd) == 0 && !c.Leader {
		return nil, errors.New("control.leader = false needs control.etcd: with the in-memory store no other process can lead")
	}
	st, err := openStore(c)
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{st: st, runners: map[string]*shards.Runner{}, managed: map[string]bool{}}
	info := map[string]shards.TierInfo{}
	for _, t := range tiers {
		cp.managed[t.name] = true
		var addrs []string
		for _, m := range t.members {
			addrs = append(addrs, m.Addr)
		}
		info[t.name] = shards.TierInfo{Shards: t.shards, Members: addrs}
		tlog := log.With("component", "control", "tier", t.name)
		if t.pool != nil {
			ag, err := shards.NewAgent(shards.AgentConfig{Tier: t.name, ID: candidate, Shards: t.shards,
				ReportInterval: c.Report, SessionTTL: c.SessionTTL, Logger: tlog}, st, t.pool)
			if err != nil {
				_ = st.Close()
				return nil, err
			}
			cp.agents = append(cp.agents, ag)
		}
		if c.Leader {
			r, err := shards.NewRunner(shards.RunnerConfig{
				Leader: shards.LeaderConfig{Tier: t.name, Shards: t.shards, Members: t.members, Initial: t.initial,
					Detection: c.Detection, Rebalance: c.Rebalance, Grace: c.Grace, SettleHold: t.settle, MaxMoves: c.MaxMoves,
					MaxReplicas: c.MaxReplicas, ReplicaBand: c.ReplicaBand,
					Seed: uint64(time.Now().UnixNano()), Logger: tlog},
				Candidate: candidate, ProbeInterval: c.Probe, ProbeTimeout: c.ProbeTO, SessionTTL: c.SessionTTL,
			}, st)
			if err != nil {
				_ = st.Close()
				return nil, err
			}
			cp.runners[t.name] = r
		}
	}
	cp.view = shards.NewView(st, info)
	return cp, nil
}

// candidateName names this process among agents and candidates.
func candidateName(role string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%s-%d", role, host, os.Getpid())
}

func (cp *controlPlane) start() {
	for _, a := range cp.agents {
		a.Start()
	}
	for _, r := range cp.runners {
		r.Start()
	}
}

// stop ends the runners (resigning), the agents (revoking their leases)
// and closes the store, within ctx.
func (cp *controlPlane) stop(ctx context.Context) error {
	var errs []error
	for _, r := range cp.runners {
		errs = append(errs, r.Stop(ctx))
	}
	for _, a := range cp.agents {
		errs = append(errs, a.Stop(ctx))
	}
	errs = append(errs, cp.st.Close())
	return errors.Join(errs...)
}

// setMembers makes a reloaded server list the membership of tier: the
// leader (if this process campaigns) reconciles it at its next round, and
// the admin API accepts drains of the new members.
func (cp *controlPlane) setMembers(tier string, list []serverEntry) {
	ms := make([]shardmap.Server, len(list))
	addrs := make([]string, len(list))
	for i, s := range list {
		ms[i], addrs[i] = shardmap.Server{Addr: s.Addr, Weight: s.Weight}, s.Addr
	}
	if r := cp.runners[tier]; r != nil {
		r.SetMembers(ms)
	}
	cp.view.SetMembers(tier, addrs)
}
