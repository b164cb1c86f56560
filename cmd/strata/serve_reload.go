package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"

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
	cur, next, merged *settings
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
}

// Reload applies next, the configuration just read, against the one last
// loaded. Only what differs between the two is touched, so a value tuned
// through the admin API survives a reload that does not change it in the
// file. What can change live does; what cannot is reported in Kept and
// stays as it was until a restart. Reload is all or nothing for the live
// part: a change the data plane refuses is an error and nothing after it
// is applied (what was applied before it stays, and is logged).
func (a *app) Reload(next *settings) (reloadReport, error) {
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
	merged.file = next.file
	return r.rep, nil
}

// reloadPromotion: the policy and the L1 TTL cap are the layering's
// atomics.
func (a *app) reloadPromotion(r *reloading) error {
	cur, next, merged := r.cur, r.next, r.merged
	if cur.Layered.Threshold != next.Layered.Threshold || !slices.Equal(cur.Layered.Rules, next.Layered.Rules) {
		p, err := promote.NewPolicy(next.Layered.Threshold, next.Layered.Rules)
		if err != nil {
			return fmt.Errorf("promotion: %w", err)
		}
		old := a.layered.Policy().String()
		a.layered.SetPolicy(p)
		merged.Layered.Threshold, merged.Layered.Rules = next.Layered.Threshold, next.Layered.Rules
		merged.eff.Promotion = next.eff.Promotion
		r.applied("promotion", old, p.String())
	}
	if cur.Layered.L1MaxTTL != next.Layered.L1MaxTTL {
		old := a.layered.L1MaxTTL()
		if err := a.layered.SetL1MaxTTL(next.Layered.L1MaxTTL); err != nil {
			return fmt.Errorf("l1.max_ttl: %w", err)
		}
		merged.Layered.L1MaxTTL = next.Layered.L1MaxTTL
		merged.eff.L1.MaxTTL = next.eff.L1.MaxTTL
		r.applied("l1.max_ttl", old, next.Layered.L1MaxTTL)
	}
	return nil
}

// reloadSampler: the rate is an atomic; the log and the families are the
// drainer's and need a restart.
func (a *app) reloadSampler(r *reloading) error {
	cur, next := r.cur, r.next
	if cur.Sampler.Rate != next.Sampler.Rate {
		old := a.sampler.Rate()
		a.sampler.SetRate(next.Sampler.Rate)
		r.merged.Sampler.Rate = next.Sampler.Rate
		r.merged.eff.Sampler.Rate = next.eff.Sampler.Rate
		r.applied("sampler.rate", old, next.Sampler.Rate)
	}
	curS, nextS := cur.eff.Sampler, next.eff.Sampler
	curS.Rate, nextS.Rate = nil, nil
	if !reflect.DeepEqual(curS, nextS) {
		r.kept("sampler (dir, rotation, gzip, window, families)", asJSON(curS), asJSON(nextS))
	}
	return nil
}

// reloadTiers: a pool's server list changes live; anything else about a
// tier needs a restart.
func (a *app) reloadTiers(r *reloading) error {
	for _, t := range []struct {
		h         *tierHandle
		cur, next *tierSettings
		merged    *tierSettings
		curF      *tierSection
		nextF     tierSection
	}{
		{a.l1, &r.cur.L1, &r.next.L1, &r.merged.L1, &r.merged.eff.L1, r.next.eff.L1},
		{a.l2, &r.cur.L2, &r.next.L2, &r.merged.L2, &r.merged.eff.L2, r.next.eff.L2},
	} {
		name := t.cur.Name
		if t.cur.Kind != t.next.Kind {
			r.kept(name+".kind", t.cur.Kind, t.next.Kind)
			continue
		}
		if t.cur.Kind == KindEmbedded && t.cur.Embedded.MaxBytes != t.next.Embedded.MaxBytes {
			r.kept(name+".memory", byteSize(t.cur.Embedded.MaxBytes), byteSize(t.next.Embedded.MaxBytes))
		}
		if t.cur.Kind != KindMemcached {
			continue
		}
		if !slices.Equal(t.cur.Servers, t.next.Servers) {
			if err := t.h.pool.setServers(t.next.Servers); err != nil {
				return fmt.Errorf("%s.servers: %w", name, err)
			}
			if a.control != nil {
				a.control.SetMembers(name, shardServers(t.next.Servers))
			}
			tier := *t.cur
			tier.Servers = t.next.Servers
			*t.merged = tier
			t.curF.Servers = t.nextF.Servers
			r.applied(name+".servers", serverList(t.cur.Servers), serverList(t.next.Servers))
		}
		if !reflect.DeepEqual(t.cur.Pool, t.next.Pool) {
			r.kept(name+" pool options", asJSON(t.cur.Pool), asJSON(t.next.Pool))
		}
	}
	return nil
}

// reloadStartOnly reports the components composed at start only. The
// control plane's store and knobs are read at start. Locality routing's
// rules, regions, links and policy are shared with the fleet, and
// changing them in one strata alone would split it.
func (a *app) reloadStartOnly(r *reloading) error {
	if !reflect.DeepEqual(r.cur.Control, r.next.Control) {
		r.kept("control", asJSON(r.cur.eff.Control), asJSON(r.next.eff.Control))
	}
	if !reflect.DeepEqual(r.cur.eff.Locality, r.next.eff.Locality) {
		r.kept("locality", asJSON(r.cur.eff.Locality), asJSON(r.next.eff.Locality))
	}
	return nil
}

// reloadLog: the level is a LevelVar; the format is the handler's.
func (a *app) reloadLog(r *reloading) error {
	cur, next := r.cur, r.next
	if cur.LogLevel != next.LogLevel {
		old := a.level.Level()
		a.level.Set(next.LogLevel)
		r.merged.LogLevel = next.LogLevel
		r.merged.eff.Log.Level = next.eff.Log.Level
		r.applied("log.level", old, next.LogLevel)
	}
	if cur.LogFormat != next.LogFormat {
		r.kept("log.format", cur.LogFormat, next.LogFormat)
	}
	return nil
}

// reloadAdmin: the token is an atomic of the admin server; the listener
// is not.
func (a *app) reloadAdmin(r *reloading) error {
	cur, next := r.cur, r.next
	if cur.Admin.Token != next.Admin.Token || cur.eff.Admin.TokenFile != next.eff.Admin.TokenFile {
		if err := a.admin.SetToken(next.Admin.Token); err != nil {
			return fmt.Errorf("admin.token_file: %w", err)
		}
		r.merged.Admin.Token = next.Admin.Token
		r.merged.eff.Admin.TokenFile = next.eff.Admin.TokenFile
		// Not applied(): the token itself stays out of the log.
		r.rep.Applied = append(r.rep.Applied, "admin.token_file")
		r.log.Info("reload: changed", "setting", "admin.token_file", "to", next.eff.Admin.TokenFile)
	}
	if cur.Admin.Listen != next.Admin.Listen {
		r.kept("admin.listen", cur.Admin.Listen, next.Admin.Listen)
	}
	if !slices.Equal(cur.Admin.AllowedHosts, next.Admin.AllowedHosts) {
		r.kept("admin.allowed_hosts", cur.Admin.AllowedHosts, next.Admin.AllowedHosts)
	}
	return nil
}

// reloadServer: the drain timeout is read at shutdown; the rest of
// [server] and [limits] are fixed when the proxy starts.
func (a *app) reloadServer(r *reloading) error {
	cur, next := r.cur, r.next
	if cur.DrainTimeout != next.DrainTimeout {
		r.merged.DrainTimeout = next.DrainTimeout
		r.merged.eff.Server.DrainTimeout = next.eff.Server.DrainTimeout
		r.applied("server.drain_timeout", cur.DrainTimeout, next.DrainTimeout)
	}
	curSrv, nextSrv := cur.eff.Server, next.eff.Server
	curSrv.DrainTimeout, nextSrv.DrainTimeout = 0, 0
	if !reflect.DeepEqual(curSrv, nextSrv) {
		r.kept("server (listen, cluster, region, loops)", asJSON(curSrv), asJSON(nextSrv))
	}
	if !reflect.DeepEqual(cur.eff.Limits, next.eff.Limits) {
		r.kept("limits", asJSON(cur.eff.Limits), asJSON(next.eff.Limits))
	}
	return nil
}

// asJSON renders a settings section for a log line.
func asJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

func serverList(ss []serverEntry) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Addr
		if s.Weight != 1 {
			out[i] += fmt.Sprintf("(weight %d)", s.Weight)
		}
	}
	return out
}
