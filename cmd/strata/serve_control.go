package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/control/shards"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// managedTiers lists the tiers of s whose pool is managed; pools are this
// process's pools by tier name, or nil.
func managedTiers(s *config.Settings, pools map[string]*poolTier, log *slog.Logger) ([]shards.ManagedTier, error) {
	var out []shards.ManagedTier
	for _, ts := range []config.TierSettings{s.L1, s.L2} {
		if ts.Kind != config.KindMemcached || !ts.Pool.Managed {
			continue
		}
		mt := shards.ManagedTier{Name: ts.Name, Members: shardServers(ts.Servers), Compat: ts.Pool.Compat != "", ToLayout: ts.Pool.ConvertFrom != nil}
		pt := pools[ts.Name]
		if pt != nil {
			mt.Pool = pt
		} else {
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
		mt.Shards, mt.Initial, mt.Settle = pt.shardCount(), pt.initialMap(), pt.p.MoveLeaseTTL()
		out = append(out, mt)
	}
	return out, nil
}

// shardServers is a server list as the control plane knows it.
func shardServers(list []config.ServerEntry) []shardmap.Server {
	ms := make([]shardmap.Server, len(list))
	for i, s := range list {
		ms[i] = shardmap.Server{Addr: s.Addr, Weight: s.Weight}
	}
	return ms
}

// stores opens the configured store for each plane: a fresh in-memory
// one, or a loan of the process's one etcd client (store.Shared), which
// closes when the last plane closes its loan and release was called.
type stores struct{ etcd *store.Shared }

func (ss *stores) open(c config.ControlSettings) (store.Store, error) {
	if len(c.Etcd) == 0 {
		return store.NewMemory(store.MemoryOptions{}).Connect(), nil
	}
	if ss.etcd == nil {
		st, err := etcdstore.New(etcdstore.Config{Endpoints: c.Etcd})
		if err != nil {
			return nil, fmt.Errorf("control.etcd: %w", err)
		}
		ss.etcd = store.Share(st)
	}
	return ss.etcd.Lend()
}

// release gives up the composer's hold once every plane has its loan.
func (ss *stores) release() {
	if ss.etcd != nil {
		_ = ss.etcd.Release()
	}
}

// buildControl composes the control plane for tiers; agents only where a
// tier has a pool here, runners where this process campaigns. It returns
// nil when no tier is managed or the file has no [control].
func buildControl(ss *stores, c config.ControlSettings, tiers []shards.ManagedTier, candidate string, log *slog.Logger) (*shards.Plane, error) {
	if len(tiers) == 0 || !c.Enabled {
		return nil, nil
	}
	if len(c.Etcd) == 0 && !c.Leader {
		return nil, errors.New("control.leader = false needs control.etcd: with the in-memory store no other process can lead")
	}
	st, err := ss.open(c)
	if err != nil {
		return nil, err
	}
	return shards.NewPlane(shards.PlaneConfig{
		Candidate: candidate, Lead: c.Leader, Logger: log,
		Agent: shards.AgentConfig{ReportInterval: c.Report, SessionTTL: c.SessionTTL},
		Runner: shards.RunnerConfig{
			Leader: shards.LeaderConfig{Detection: c.Detection, Rebalance: c.Rebalance, Grace: c.Grace, ConvertGrace: c.Convert, MaintenanceGrace: c.Maint,
				MaxMoves: c.MaxMoves, MaxMovesPerServer: c.PerServer, MaxReplicas: c.MaxReplicas, ReplicaBand: c.ReplicaBand,
				Seed: uint64(time.Now().UnixNano())},
			ProbeInterval: c.Probe, ProbeTimeout: c.ProbeTO, SessionTTL: c.SessionTTL,
		},
	}, st, tiers)
}

// candidateName names this process among agents and candidates.
func candidateName(role string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%s-%d", role, host, os.Getpid())
}
