package main

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/strata-cache/strata/config"
	"github.com/strata-cache/strata/internal/configfile"

	"github.com/strata-cache/strata/tiers/promote"
)

// A reload's report and bookkeeping are config's (config.Reload).
type (
	reloadReport = config.Report
	reloading    = config.Reload
)

// reloadSteps are the components a reload visits, in order. Each applies
// its own live settings that differ between r.Cur and r.Next (copying
// them into r.Merged) and reports the ones that need a restart. An error
// stops the reload: what was applied before it stays.
var reloadSteps = []func(*app, *reloading) error{
	(*app).reloadPromotion,
	(*app).reloadHotKeys,
	(*app).reloadSampler,
	(*app).reloadTiers,
	(*app).reloadStartOnly,
	(*app).reloadLog,
	(*app).reloadAdmin,
	(*app).reloadServer,
	(*app).reloadTLS,
}

// Reload applies next, the configuration just read, against the one last
// loaded. Only what differs between the two is touched, so a value tuned
// through the admin API survives a reload that does not change it in the
// file. What can change live does; what cannot is reported in Kept and
// stays as it was until a restart. Reload is all or nothing for the live
// part: a change the data plane refuses is an error and nothing after it
// is applied (what was applied before it stays, and is logged).
func (a *app) Reload(next *config.Settings) (reloadReport, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	merged := *a.loaded
	defer func() { a.loaded = &merged }()
	r := &reloading{Cur: a.loaded, Next: next, Merged: &merged, Log: a.log}
	for _, step := range reloadSteps {
		if err := step(a, r); err != nil {
			return r.Rep, err
		}
	}
	merged.Path = next.Path
	return r.Rep, nil
}

// reloadPromotion: the policy and the L1 TTL cap are the layering's
// atomics.
func (a *app) reloadPromotion(r *reloading) error {
	cur, next, m := &r.Cur.Layered, &r.Next.Layered, r.Merged
	if cur.Threshold != next.Threshold || !slices.Equal(cur.Rules, next.Rules) {
		p, err := promote.NewPolicy(next.Threshold, next.Rules)
		if err != nil {
			return fmt.Errorf("promotion: %w", err)
		}
		r.Applied("promotion", a.layered.Policy().String(), p.String())
		a.layered.SetPolicy(p)
		m.Layered.Threshold, m.Layered.Rules, m.Effective.Promotion = next.Threshold, next.Rules, r.Next.Effective.Promotion
	}
	return r.Live("l1.max_ttl", cur.L1MaxTTL != next.L1MaxTTL, a.layered.L1MaxTTL(), next.L1MaxTTL, func() error {
		if err := a.layered.SetL1MaxTTL(next.L1MaxTTL); err != nil {
			return err
		}
		m.Layered.L1MaxTTL, m.Effective.L1.MaxTTL = next.L1MaxTTL, r.Next.Effective.L1.MaxTTL
		return nil
	})
}

// reloadSampler: the rate is an atomic; the log and the families are the
// drainer's and need a restart.
func (a *app) reloadSampler(r *reloading) error {
	cur, next := r.Cur, r.Next
	curS, nextS := cur.Effective.Sampler, next.Effective.Sampler
	curS.Rate, nextS.Rate = nil, nil
	r.Keep("sampler (dir, rotation, gzip, window, families)", config.AsJSON(curS), config.AsJSON(nextS))
	return r.Live("sampler.rate", cur.Sampler.Rate != next.Sampler.Rate, a.sampler.Rate(), next.Sampler.Rate, func() error {
		a.sampler.SetRate(next.Sampler.Rate)
		r.Merged.Sampler.Rate, r.Merged.Effective.Sampler.Rate = next.Sampler.Rate, next.Effective.Sampler.Rate
		return nil
	})
}

// reloadTiers: a pool's server list changes live; anything else about a
// tier needs a restart.
func (a *app) reloadTiers(r *reloading) error {
	for _, t := range []struct {
		h                 *tierHandle
		cur, next, merged *config.TierSettings
		mergedF, nextF    *config.TierSection
	}{
		{a.l1, &r.Cur.L1, &r.Next.L1, &r.Merged.L1, &r.Merged.Effective.L1, &r.Next.Effective.L1},
		{a.l2, &r.Cur.L2, &r.Next.L2, &r.Merged.L2, &r.Merged.Effective.L2, &r.Next.Effective.L2},
	} {
		name, cur, next := t.cur.Name, t.cur, t.next
		if cur.Kind != next.Kind {
			r.Kept(name+".kind", cur.Kind, next.Kind)
			continue
		}
		if cur.Kind == config.KindEmbedded {
			r.Keep(name+".memory", configfile.Size(cur.Embedded.MaxBytes), configfile.Size(next.Embedded.MaxBytes))
			r.Keep(name+".snapshot", cur.Embedded.Snapshot, next.Embedded.Snapshot)
		}
		if cur.Kind != config.KindMemcached {
			continue
		}
		if err := r.Live(name+".servers", !slices.Equal(cur.Servers, next.Servers), config.ServerList(cur.Servers), config.ServerList(next.Servers), func() error {
			if err := t.h.pool.setServers(next.Servers); err != nil {
				return err
			}
			if a.control != nil {
				a.control.SetMembers(name, shardServers(next.Servers))
			}
			t.merged.Servers, t.mergedF.Servers = next.Servers, t.nextF.Servers
			return nil
		}); err != nil {
			return err
		}
		r.Keep(name+" pool options", config.AsJSON(cur.Pool), config.AsJSON(next.Pool))
	}
	return nil
}

// reloadStartOnly reports the components composed at start only. The
// control plane's store and knobs are read at start. Locality routing's
// rules, regions, links and policy are shared with the fleet, and
// changing them in one strata alone would split it.
func (a *app) reloadStartOnly(r *reloading) error {
	if !reflect.DeepEqual(r.Cur.Control, r.Next.Control) {
		r.Kept("control", config.AsJSON(r.Cur.Effective.Control), config.AsJSON(r.Next.Effective.Control))
	}
	r.Keep("locality", config.AsJSON(r.Cur.Effective.Locality), config.AsJSON(r.Next.Effective.Locality))
	return nil
}

// reloadLog: the level is a LevelVar; the format is the handler's.
func (a *app) reloadLog(r *reloading) error {
	cur, next := r.Cur, r.Next
	r.Keep("log.format", cur.LogFormat, next.LogFormat)
	return r.Live("log.level", cur.LogLevel != next.LogLevel, a.level.Level(), next.LogLevel, func() error {
		a.level.Set(next.LogLevel)
		r.Merged.LogLevel, r.Merged.Effective.Log.Level = next.LogLevel, next.Effective.Log.Level
		return nil
	})
}

// reloadAdmin: the token is an atomic of the admin server; the listener
// is not. The report names the token's file, never the token.
func (a *app) reloadAdmin(r *reloading) error {
	cur, next := r.Cur, r.Next
	r.Keep("admin.listen", cur.Admin.Listen, next.Admin.Listen)
	r.Keep("admin.allowed_hosts", cur.Admin.AllowedHosts, next.Admin.AllowedHosts)
	changed := cur.Admin.Token != next.Admin.Token || cur.Effective.Admin.TokenFile != next.Effective.Admin.TokenFile
	return r.Live("admin.token_file", changed, cur.Effective.Admin.TokenFile, next.Effective.Admin.TokenFile, func() error {
		if err := a.admin.SetToken(next.Admin.Token); err != nil {
			return err
		}
		r.Merged.Admin.Token, r.Merged.Effective.Admin.TokenFile = next.Admin.Token, next.Effective.Admin.TokenFile
		return nil
	})
}

// reloadServer: the drain timeout is read at shutdown; the rest of
// [server] and [limits] are fixed when the proxy starts.
func (a *app) reloadServer(r *reloading) error {
	cur, next := r.Cur, r.Next
	curSrv, nextSrv := cur.Effective.Server, next.Effective.Server
	curSrv.DrainTimeout, nextSrv.DrainTimeout = 0, 0
	r.Keep("server (listen, cluster, region, loops)", config.AsJSON(curSrv), config.AsJSON(nextSrv))
	r.Keep("limits", config.AsJSON(cur.Effective.Limits), config.AsJSON(next.Effective.Limits))
	r.Keep("auth", config.AsJSON(cur.Effective.Auth), config.AsJSON(next.Effective.Auth))
	if err := a.proxy.ReloadAuth(); err != nil { // every reload re-reads the users file
		return err
	}
	return r.Live("server.drain_timeout", cur.DrainTimeout != next.DrainTimeout, cur.DrainTimeout, next.DrainTimeout, func() error {
		r.Merged.DrainTimeout, r.Merged.Effective.Server.DrainTimeout = next.DrainTimeout, next.Effective.Server.DrainTimeout
		return nil
	})
}

// reloadTLS re-reads the client listener's certificate files, whose
// paths are fixed at start; a refused file keeps the certificate in force.
func (a *app) reloadTLS(r *reloading) error {
	r.Keep("tls", config.AsJSON(r.Cur.Effective.TLS), config.AsJSON(r.Next.Effective.TLS))
	if err := a.RefreshCerts(); err != nil {
		r.Log.Error("reload: TLS files refused; the certificate in force stays", "err", err)
		return err
	}
	if st, ok := a.proxy.TLSStats(); ok {
		r.Applied("tls certificate", "", st.Serial)
	}
	return nil
}

// RefreshCerts reads the listener's and the pools' certificate files
// again, for SIGHUP and memcached's refresh_certs alike.
func (a *app) RefreshCerts() error {
	err := a.proxy.ReloadTLS()
	for _, h := range []*tierHandle{a.l1, a.l2} {
		if err == nil && h != nil && h.pool != nil {
			err = h.pool.p.ReloadTLS() // the backends' material, for new connections
		}
	}
	return err
}
