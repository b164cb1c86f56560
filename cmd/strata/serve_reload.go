package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"

	"github.com/strata-cache/strata/config"
	"github.com/strata-cache/strata/internal/configfile"

	"github.com/strata-cache/strata/tiers/promote"
)

// reloadReport says what a reload did.
type reloadReport struct {
	Applied []string // settings changed live
	Kept    []string // settings that changed in the file but need a restart
}

// reloading is one reload in progress: the configuration in force (cur),
// the one just read (next), and merged, what will be in force: cur with
// the live changes copied over from next. merged is committed even when a
// change fails half way, so that it always describes what runs.
type reloading struct {
	cur, next, merged *config.Settings
	rep               reloadReport
	log               *slog.Logger
}

// applied records a setting changed live.
func (r *reloading) applied(what string, from, to any) {
	r.rep.Applied = append(r.rep.Applied, what)
	r.log.Info("reload: changed", "setting", what, "from", from, "to", to)
}

// kept records a setting that changed in the file but needs a restart.
func (r *reloading) kept(what string, from, to any) {
	r.rep.Kept = append(r.rep.Kept, what)
	r.log.Warn("reload: needs a restart; keeping the running value", "setting", what, "running", from, "file", to)
}

// live applies one setting that changes live when its value in the file
// changed: set applies it to the running component and, once that
// succeeded, copies it into r.merged. from is the running value, to the
// file's; they are logged, so a secret is never one of them. An error
// names the setting and stops the reload.
func (r *reloading) live(what string, changed bool, from, to any, set func() error) error {
	if !changed {
		return nil
	}
	if err := set(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	r.applied(what, from, to)
	return nil
}

// keep reports a setting that needs a restart when its value in the file
// changed. Sections are passed through asJSON, which the log shows.
func (r *reloading) keep(what string, from, to any) {
	if !reflect.DeepEqual(from, to) {
		r.kept(what, from, to)
	}
}

// reloadSteps are the components a reload visits, in order. Each applies
// its own live settings that differ between r.cur and r.next (copying
// them into r.merged) and reports the ones that need a restart. An error
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
	r := &reloading{cur: a.loaded, next: next, merged: &merged, log: a.log}
	for _, step := range reloadSteps {
		if err := step(a, r); err != nil {
			return r.rep, err
		}
	}
	merged.Path = next.Path
	return r.rep, nil
}

// reloadPromotion: the policy and the L1 TTL cap are the layering's
// atomics.
func (a *app) reloadPromotion(r *reloading) error {
	cur, next, m := &r.cur.Layered, &r.next.Layered, r.merged
	if cur.Threshold != next.Threshold || !slices.Equal(cur.Rules, next.Rules) {
		p, err := promote.NewPolicy(next.Threshold, next.Rules)
		if err != nil {
			return fmt.Errorf("promotion: %w", err)
		}
		r.applied("promotion", a.layered.Policy().String(), p.String())
		a.layered.SetPolicy(p)
		m.Layered.Threshold, m.Layered.Rules, m.Effective.Promotion = next.Threshold, next.Rules, r.next.Effective.Promotion
	}
	return r.live("l1.max_ttl", cur.L1MaxTTL != next.L1MaxTTL, a.layered.L1MaxTTL(), next.L1MaxTTL, func() error {
		if err := a.layered.SetL1MaxTTL(next.L1MaxTTL); err != nil {
			return err
		}
		m.Layered.L1MaxTTL, m.Effective.L1.MaxTTL = next.L1MaxTTL, r.next.Effective.L1.MaxTTL
		return nil
	})
}

// reloadSampler: the rate is an atomic; the log and the families are the
// drainer's and need a restart.
func (a *app) reloadSampler(r *reloading) error {
	cur, next := r.cur, r.next
	curS, nextS := cur.Effective.Sampler, next.Effective.Sampler
	curS.Rate, nextS.Rate = nil, nil
	r.keep("sampler (dir, rotation, gzip, window, families)", asJSON(curS), asJSON(nextS))
	return r.live("sampler.rate", cur.Sampler.Rate != next.Sampler.Rate, a.sampler.Rate(), next.Sampler.Rate, func() error {
		a.sampler.SetRate(next.Sampler.Rate)
		r.merged.Sampler.Rate, r.merged.Effective.Sampler.Rate = next.Sampler.Rate, next.Effective.Sampler.Rate
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
		{a.l1, &r.cur.L1, &r.next.L1, &r.merged.L1, &r.merged.Effective.L1, &r.next.Effective.L1},
		{a.l2, &r.cur.L2, &r.next.L2, &r.merged.L2, &r.merged.Effective.L2, &r.next.Effective.L2},
	} {
		name, cur, next := t.cur.Name, t.cur, t.next
		if cur.Kind != next.Kind {
			r.kept(name+".kind", cur.Kind, next.Kind)
			continue
		}
		if cur.Kind == config.KindEmbedded {
			r.keep(name+".memory", configfile.Size(cur.Embedded.MaxBytes), configfile.Size(next.Embedded.MaxBytes))
		}
		if cur.Kind != config.KindMemcached {
			continue
		}
		if err := r.live(name+".servers", !slices.Equal(cur.Servers, next.Servers), serverList(cur.Servers), serverList(next.Servers), func() error {
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
		r.keep(name+" pool options", asJSON(cur.Pool), asJSON(next.Pool))
	}
	return nil
}

// reloadStartOnly reports the components composed at start only. The
// control plane's store and knobs are read at start. Locality routing's
// rules, regions, links and policy are shared with the fleet, and
// changing them in one strata alone would split it.
func (a *app) reloadStartOnly(r *reloading) error {
	if !reflect.DeepEqual(r.cur.Control, r.next.Control) {
		r.kept("control", asJSON(r.cur.Effective.Control), asJSON(r.next.Effective.Control))
	}
	r.keep("locality", asJSON(r.cur.Effective.Locality), asJSON(r.next.Effective.Locality))
	return nil
}

// reloadLog: the level is a LevelVar; the format is the handler's.
func (a *app) reloadLog(r *reloading) error {
	cur, next := r.cur, r.next
	r.keep("log.format", cur.LogFormat, next.LogFormat)
	return r.live("log.level", cur.LogLevel != next.LogLevel, a.level.Level(), next.LogLevel, func() error {
		a.level.Set(next.LogLevel)
		r.merged.LogLevel, r.merged.Effective.Log.Level = next.LogLevel, next.Effective.Log.Level
		return nil
	})
}

// reloadAdmin: the token is an atomic of the admin server; the listener
// is not. The report names the token's file, never the token.
func (a *app) reloadAdmin(r *reloading) error {
	cur, next := r.cur, r.next
	r.keep("admin.listen", cur.Admin.Listen, next.Admin.Listen)
	r.keep("admin.allowed_hosts", cur.Admin.AllowedHosts, next.Admin.AllowedHosts)
	changed := cur.Admin.Token != next.Admin.Token || cur.Effective.Admin.TokenFile != next.Effective.Admin.TokenFile
	return r.live("admin.token_file", changed, cur.Effective.Admin.TokenFile, next.Effective.Admin.TokenFile, func() error {
		if err := a.admin.SetToken(next.Admin.Token); err != nil {
			return err
		}
		r.merged.Admin.Token, r.merged.Effective.Admin.TokenFile = next.Admin.Token, next.Effective.Admin.TokenFile
		return nil
	})
}

// reloadServer: the drain timeout is read at shutdown; the rest of
// [server] and [limits] are fixed when the proxy starts.
func (a *app) reloadServer(r *reloading) error {
	cur, next := r.cur, r.next
	curSrv, nextSrv := cur.Effective.Server, next.Effective.Server
	curSrv.DrainTimeout, nextSrv.DrainTimeout = 0, 0
	r.keep("server (listen, cluster, region, loops)", asJSON(curSrv), asJSON(nextSrv))
	r.keep("limits", asJSON(cur.Effective.Limits), asJSON(next.Effective.Limits))
	r.keep("auth", asJSON(cur.Effective.Auth), asJSON(next.Effective.Auth))
	if err := a.proxy.ReloadAuth(); err != nil { // every reload re-reads the users file
		return err
	}
	return r.live("server.drain_timeout", cur.DrainTimeout != next.DrainTimeout, cur.DrainTimeout, next.DrainTimeout, func() error {
		r.merged.DrainTimeout, r.merged.Effective.Server.DrainTimeout = next.DrainTimeout, next.Effective.Server.DrainTimeout
		return nil
	})
}

// reloadTLS re-reads the client listener's certificate files, whose
// paths are fixed at start; a refused file keeps the certificate in force.
func (a *app) reloadTLS(r *reloading) error {
	r.keep("tls", asJSON(r.cur.Effective.TLS), asJSON(r.next.Effective.TLS))
	if err := a.RefreshCerts(); err != nil {
		r.log.Error("reload: TLS files refused; the certificate in force stays", "err", err)
		return err
	}
	if st, ok := a.proxy.TLSStats(); ok {
		r.applied("tls certificate", "", st.Serial)
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

// asJSON renders a settings section for a log line.
func asJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

func serverList(ss []config.ServerEntry) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Addr
		if s.Weight != 1 {
			out[i] += fmt.Sprintf("(weight %d)", s.Weight)
		}
	}
	return out
}
