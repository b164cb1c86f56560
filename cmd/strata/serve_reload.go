package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/strata-cache/strata/tiers/promote"
)

// reloadReport says what a reload did.
type reloadReport struct {
	Applied []string // settings changed live
	Kept    []string // settings that changed in the file but need a restart
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
	cur := a.loaded
	var rep reloadReport
	applied := func(what string, from, to any) {
		rep.Applied = append(rep.Applied, what)
		a.log.Info("reload: changed", "setting", what, "from", from, "to", to)
	}
	kept := func(what string, from, to any) {
		rep.Kept = append(rep.Kept, what)
		a.log.Warn("reload: needs a restart; keeping the running value", "setting", what, "running", from, "file", to)
	}
	// merged is what will be in force: the current configuration with the
	// live changes copied over from next. It is committed even when a
	// change fails half way, so that it always describes what runs.
	merged := *cur
	defer func() { a.loaded = &merged }()

	// Promotion.
	if cur.Layered.Threshold != next.Layered.Threshold || !slices.Equal(cur.Layered.Rules, next.Layered.Rules) {
		p, err := promote.NewPolicy(next.Layered.Threshold, next.Layered.Rules)
		if err != nil {
			return rep, fmt.Errorf("promotion: %w", err)
		}
		old := a.layered.Policy().String()
		a.layered.SetPolicy(p)
		merged.Layered.Threshold, merged.Layered.Rules = next.Layered.Threshold, next.Layered.Rules
		merged.eff.Promotion = next.eff.Promotion
		applied("promotion", old, p.String())
	}
	if cur.Layered.L1MaxTTL != next.Layered.L1MaxTTL {
		old := a.layered.L1MaxTTL()
		if err := a.layered.SetL1MaxTTL(next.Layered.L1MaxTTL); err != nil {
			return rep, fmt.Errorf("l1.max_ttl: %w", err)
		}
		merged.Layered.L1MaxTTL = next.Layered.L1MaxTTL
		merged.eff.L1.MaxTTL = next.eff.L1.MaxTTL
		applied("l1.max_ttl", old, next.Layered.L1MaxTTL)
	}

	if err := a.reloadHotKeys(cur, next, &merged, applied, kept); err != nil {
		return rep, err
	}

	// Sampler: the rate is an atomic; the log and the families are the
	// drainer's and need a restart.
	if cur.Sampler.Rate != next.Sampler.Rate {
		old := a.sampler.Rate()
		a.sampler.SetRate(next.Sampler.Rate)
		merged.Sampler.Rate = next.Sampler.Rate
		merged.eff.Sampler.Rate = next.eff.Sampler.Rate
		applied("sampler.rate", old, next.Sampler.Rate)
	}
	curS, nextS := cur.eff.Sampler, next.eff.Sampler
	curS.Rate, nextS.Rate = nil, nil
	if !reflect.DeepEqual(curS, nextS) {
		kept("sampler (dir, rotation, gzip, window, families)", asJSON(curS), asJSON(nextS))
	}

	// Pools: a server list changes live; anything else about a tier
	// needs a restart.
	for _, t := range []struct {
		h         *tierHandle
		cur, next *tierSettings
		curF      *tierSection
		nextF     tierSection
	}{
		{a.l1, &cur.L1, &next.L1, &merged.eff.L1, next.eff.L1},
		{a.l2, &cur.L2, &next.L2, &merged.eff.L2, next.eff.L2},
	} {
		name := t.cur.Name
		if t.cur.Kind != t.next.Kind {
			kept(name+".kind", t.cur.Kind, t.next.Kind)
			continue
		}
		if t.cur.Kind == KindEmbedded && t.cur.Embedded.MaxBytes != t.next.Embedded.MaxBytes {
			kept(name+".memory", byteSize(t.cur.Embedded.MaxBytes), byteSize(t.next.Embedded.MaxBytes))
		}
		if t.cur.Kind != KindMemcached {
			continue
		}
		if !slices.Equal(t.cur.Servers, t.next.Servers) {
			if err := t.h.pool.setServers(t.next.Servers); err != nil {
				return rep, fmt.Errorf("%s.servers: %w", name, err)
			}
			if a.control != nil {
				a.control.setMembers(name, t.next.Servers)
			}
			tier := *t.cur
			tier.Servers = t.next.Servers
			if name == "l1" {
				merged.L1 = tier
			} else {
				merged.L2 = tier
			}
			t.curF.Servers = t.nextF.Servers
			applied(name+".servers", serverList(t.cur.Servers), serverList(t.next.Servers))
		}
		if !reflect.DeepEqual(t.cur.Pool, t.next.Pool) {
			kept(name+" pool options", asJSON(t.cur.Pool), asJSON(t.next.Pool))
		}
	}

	// The control plane's store and knobs are read at start.
	if !reflect.DeepEqual(cur.Control, next.Control) {
		kept("control", asJSON(cur.eff.Control), asJSON(next.eff.Control))
	}

	// Locality routing is composed at start: its rules, regions, links and
	// policy are shared with the fleet, and changing them in one strata
	// alone would split it.
	if !reflect.DeepEqual(cur.eff.Locality, next.eff.Locality) {
		kept("locality", asJSON(cur.eff.Locality), asJSON(next.eff.Locality))
	}

	// Logging: the level is a LevelVar; the format is the handler's.
	if cur.LogLevel != next.LogLevel {
		old := a.level.Level()
		a.level.Set(next.LogLevel)
		merged.LogLevel = next.LogLevel
		merged.eff.Log.Level = next.eff.Log.Level
		applied("log.level", old, next.LogLevel)
	}
	if cur.LogFormat != next.LogFormat {
		kept("log.format", cur.LogFormat, next.LogFormat)
	}

	// Admin: the token is an atomic of the admin server; the listener is
	// not.
	if cur.Admin.Token != next.Admin.Token || cur.eff.Admin.TokenFile != next.eff.Admin.TokenFile {
		if err := a.admin.SetToken(next.Admin.Token); err != nil {
			return rep, fmt.Errorf("admin.token_file: %w", err)
		}
		merged.Admin.Token = next.Admin.Token
		merged.eff.Admin.TokenFile = next.eff.Admin.TokenFile
		rep.Applied = append(rep.Applied, "admin.token_file")
		a.log.Info("reload: changed", "setting", "admin.token_file", "to", next.eff.Admin.TokenFile)
	}
	if cur.Admin.Listen != next.Admin.Listen {
		kept("admin.listen", cur.Admin.Listen, next.Admin.Listen)
	}
	if !slices.Equal(cur.Admin.AllowedHosts, next.Admin.AllowedHosts) {
		kept("admin.allowed_hosts", cur.Admin.AllowedHosts, next.Admin.AllowedHosts)
	}

	// The drain timeout is read at shutdown.
	if cur.DrainTimeout != next.DrainTimeout {
		merged.DrainTimeout = next.DrainTimeout
		merged.eff.Server.DrainTimeout = next.eff.Server.DrainTimeout
		applied("server.drain_timeout", cur.DrainTimeout, next.DrainTimeout)
	}
	// The rest of [server] and [limits] are fixed when the proxy starts.
	curSrv, nextSrv := cur.eff.Server, next.eff.Server
	curSrv.DrainTimeout, nextSrv.DrainTimeout = 0, 0
	if !reflect.DeepEqual(curSrv, nextSrv) {
		kept("server (listen, cluster, region, loops)", asJSON(curSrv), asJSON(nextSrv))
	}
	if !reflect.DeepEqual(cur.eff.Limits, next.eff.Limits) {
		kept("limits", asJSON(cur.eff.Limits), asJSON(next.eff.Limits))
	}

	merged.file = next.file
	return rep, nil
}

// errEmptyReload refuses a reload from a file that sets nothing.
var errEmptyReload = errors.New("the file sets no key (empty, or only comments and blank lines); refusing to reset every live setting to its default")

// checkReloadable refuses to reload from a file that sets nothing. Read at
// start, such a file means the defaults; read on SIGHUP, it is far more
// likely a file caught half written (an editor or a deploy tool truncates
// it first), and taking it at its word would reset every live setting, a
// token set through the file included. A missing file is refused by the
// reload already; this treats an empty one the same way.
func checkReloadable(path string) error {
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil // loadSettings reports it with the same words as at start
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			return nil
		}
	}
	return errEmptyReload
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
