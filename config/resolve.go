package config

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/configfile"
	"github.com/strata-cache/strata/internal/handoff"
	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/auth"
	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/sampler/family"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/hotkeys"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/promote"
)

// Tier kinds of [l1] and [l2].
const (
	KindEmbedded  = "embedded"
	KindMemcached = "memcached"
	KindNone      = "none"
)

// The file's own defaults, where it picks for the packages (the rest are
// the packages' own, from their DefaultConfig).
const (
	defaultName         = "local"
	defaultDrainTimeout = 10 * time.Second
	defaultL2Memory     = 1 << 30
)

// proxyKeys maps the fields of proxy.Config the file sets onto their keys.
var proxyKeys = fieldKeys{
	"Listen":               "server.listen",
	"Loops":                "server.loops",
	"MergeLoops":           "server.merge_loops",
	"Limits.MaxItemSize":   "limits.max_item_size",
	"MaxInflight":          "limits.max_inflight",
	"MaxOutboundBytes":     "limits.max_outbound_bytes",
	"Auth.UsersFile":       "auth.users_file",
	"Auth.SlowAfter":       "auth.slow_after",
	"Auth.MaxDelay":        "auth.max_delay",
	"ListenPlain":          "server.listen_plain",
	"TLS.Cert":             "tls.cert",
	"TLS.Key":              "tls.key",
	"TLS.CA":               "tls.ca",
	"TLS.Verify":           "tls.verify",
	"TLS.HandshakeTimeout": "tls.handshake_timeout",
}

// Settings is a configuration resolved onto the packages' own Configs.
// Loggers, clocks and the like are added when the server is built.
type Settings struct {
	Path string // the file read; "" for none
	// Effective is the file as it is in force: every key filled with the value
	// used, flags applied. /admin/v1/config shows it.
	Effective File

	DrainTimeout time.Duration
	Handoff      handoff.Config
	L1, L2       TierSettings
	Layered      layered.Config
	HotKeys      hotkeys.Config
	Proxy        proxy.Config
	Sampler      sampler.Config
	Admin        admin.Config // Token holds the token file's content
	Control      ControlSettings
	Locality     LocalitySettings
	LogFormat    string
	LogLevel     slog.Level
}

// TierSettings is one tier: its kind and the config of that kind.
type TierSettings struct {
	Name        string // "l1" or "l2"
	Kind        string
	MaxItemSize int // limits.max_item_size
	Embedded    embedded.Config
	Servers     []ServerEntry
	Pool        PoolSection
}

// Load reads path (none when empty), applies the flags given and
// resolves the result. Every problem is reported, each with its line or
// flag; a configuration with any is rejected whole.
func Load(path string, fl *Flags) (*Settings, error) {
	p, errs, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	errs = append(errs, fl.apply(p)...)
	s, rerrs := p.resolve()
	errs = append(errs, rerrs...)
	if len(errs) > 0 {
		return nil, errs.sorted()
	}
	s.Path = path
	return s, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// resolver turns a parsed file into settings: each section fills the keys
// not given (e, the effective file) and the package's Config, and the
// package's Validate judges it.
type resolver struct {
	p    *parsedFile
	e    File // a copy: the parsed file stays as written
	s    *Settings
	errs Errors
}

func (r *resolver) bad(key, format string, args ...any) {
	r.errs = append(r.errs, r.p.errAt(key, format, args...))
}

// resolve fills defaults, checks every key and builds the packages'
// Configs.
func (p *parsedFile) resolve() (*Settings, Errors) {
	r := &resolver{p: p, e: p.fc, s: &Settings{}}
	r.server()
	r.proxy() // before the tiers: their item size follows [limits]
	r.s.L1 = r.tier("l1", &r.e.L1, embedded.DefaultMaxBytes)
	r.s.L2 = r.tier("l2", &r.e.L2, defaultL2Memory)
	r.flushAll()
	r.promotion()
	r.hotKeys()
	r.sampler()
	r.log()
	r.admin()
	r.controlAndLocality()
	r.s.Effective = r.e
	return r.s, r.errs
}

// server is [server] but for what the proxy takes (see proxy).
func (r *resolver) server() {
	e := &r.e.Server
	givenOr(&e.Listen, proxy.DefaultListen)
	givenOr(&e.Cluster, defaultName)
	givenOr(&e.Region, defaultName)
	// The names are this strata's identity in sample records, the control
	// plane's keys and locality's regions: no one package owns them.
	for _, k := range []struct{ key, v string }{{"server.cluster", e.Cluster}, {"server.region", e.Region}} {
		if !nameRE.MatchString(k.v) {
			r.bad(k.key, "%q: want letters, digits, '_', '-' or '.', at most 64", k.v)
		}
	}
	given(&e.Loops, 0) // 0: one loop per CPU
	r.s.DrainTimeout = time.Duration(givenOr(&e.DrainTimeout, configfile.Duration(defaultDrainTimeout)))
	r.s.Handoff = handoff.Config{Socket: e.HandoffSocket}
	r.fields(r.s.Handoff.Validate(), fieldKeys{"Socket": "server.handoff_socket"}, "server")
}

// proxy is proxy.Config from [server] and [limits].
func (r *resolver) proxy() {
	c, l := proxy.DefaultConfig(), &r.e.Limits
	c.Listen = r.e.Server.Listen
	c.Loops = int(*r.e.Server.Loops)
	c.MergeLoops = given(&r.e.Server.MergeLoops, c.MergeLoops)
	c.Limits.MaxItemSize = int(givenOr(&l.MaxItemSize, configfile.Size(c.Limits.MaxItemSize)))
	c.MaxInflight = int(given(&l.MaxInflight, int64(c.MaxInflight)))
	c.MaxOutboundBytes = int(givenOr(&l.MaxOutboundBytes, configfile.Size(c.MaxOutboundBytes)))
	a := &r.e.Auth
	c.Auth = auth.Config{UsersFile: a.UsersFile, SlowAfter: int(given(&a.SlowAfter, int64(auth.DefaultConfig().SlowAfter))),
		MaxDelay: time.Duration(givenOr(&a.MaxDelay, duration(auth.DefaultConfig().MaxDelay)))}
	c.ListenPlain = r.e.Server.ListenPlain
	t := &r.e.TLS
	c.TLS = tlsconn.Config{Cert: t.Cert, Key: t.Key, CA: t.CA, Verify: t.Verify,
		HandshakeTimeout: time.Duration(givenOr(&t.HandshakeTimeout, configfile.Duration(c.TLS.HandshakeTimeout)))}
	r.fields(c.Validate(), proxyKeys, "limits")
	r.s.Proxy = c
}

// flushAll decides limits.flush_all once the tiers are known. The
// embedded tiers are this process's alone, so flush_all empties them as
// memcached's does by default; memcached servers in a pool may be shared
// with other clients and other strata, so there it stays refused unless
// the file says otherwise.
func (r *resolver) flushAll() {
	l := &r.e.Limits
	r.s.Proxy.Limits.DisableFlush = !given(&l.FlushAll, r.s.L1.Kind != KindMemcached && r.s.L2.Kind != KindMemcached)
}

// promotion is layered.Config from [promotion] and l1.max_ttl.
func (r *resolver) promotion() {
	c, pr := layered.DefaultConfig(), &r.e.Promotion
	c.L1MaxTTL = time.Duration(givenOr(&r.e.L1.MaxTTL, configfile.Duration(c.L1MaxTTL)))
	if n, err := unsigned[uint32](given(&pr.Threshold, int64(c.Threshold))); err != nil {
		r.bad("promotion.threshold", "%v", err)
	} else {
		c.Threshold = n
	}
	for i, rs := range pr.Rules {
		key := fmt.Sprintf("promotion.rule[%d]", i)
		// Every rule is kept, so that the Config's Rules[i] is the file's
		// rule[i]; a rule whose threshold is reported here gets a valid
		// one, not to be reported twice.
		rule := promote.Rule{Prefix: deref(rs.Prefix), Threshold: promote.MinThreshold}
		if rs.Threshold == nil {
			r.bad(key+".threshold", "every rule needs a threshold")
		} else if n, err := unsigned[uint32](*rs.Threshold); err != nil {
			r.bad(key+".threshold", "%v", err)
		} else {
			rule.Threshold = n
		}
		c.Rules = append(c.Rules, rule)
	}
	r.fields(c.Validate(), layeredKeys, "promotion")
	r.s.Layered = c
}

// sampler is sampler.Config from [sampler] and the strata's names.
func (r *resolver) sampler() {
	e := &r.e.Sampler
	rate, err := unsigned[uint64](given(&e.Rate, int64(sampler.DefaultRate)))
	if err != nil {
		r.bad("sampler.rate", "%v: 0 turns sampling off, R samples one key in R", err)
	}
	c := sampler.Config{
		Rate:         rate,
		Dir:          e.Dir,
		MaxFileBytes: int64(givenOr(&e.RotateSize, configfile.Size(sampler.DefaultMaxFileBytes))),
		MaxFileAge:   time.Duration(givenOr(&e.RotateAge, configfile.Duration(sampler.DefaultMaxFileAge))),
		Gzip:         e.Gzip,
		Cluster:      r.e.Server.Cluster,
		Region:       r.e.Server.Region,
		Window:       time.Duration(givenOr(&e.Window, configfile.Duration(sampler.DefaultWindow))),
	}
	for _, f := range e.Families {
		c.Families = append(c.Families, family.Rule{Match: f.Match, Family: f.Family})
	}
	r.fields(c.Validate(), samplerKeys, "sampler")
	r.s.Sampler = c
}

// log is [log]: the logger is built here, in the composition root.
func (r *resolver) log() {
	e := &r.e.Log
	if r.s.LogFormat = givenOr(&e.Format, "text"); e.Format != "text" && e.Format != "json" {
		r.bad("log.format", "%q: want text or json", e.Format)
	}
	givenOr(&e.Level, "info")
	if err := r.s.LogLevel.UnmarshalText([]byte(e.Level)); err != nil {
		r.bad("log.level", "%q: want debug, info, warn or error", e.Level)
	}
}

// admin is admin.Config from [admin]; the token is read from its file.
func (r *resolver) admin() {
	e := &r.e.Admin
	givenOr(&e.Listen, admin.DefaultListen)
	if e.AllowedHosts == nil {
		e.AllowedHosts = []string{} // the effective config shows [], as the default file
	}
	c := admin.Config{Listen: e.Listen, AllowedHosts: slices.Clone(e.AllowedHosts), TLS: e.TLS}
	if e.TLS && r.e.TLS.Cert == "" {
		r.bad("admin.tls", "HTTPS uses the memcached listener's certificate: set [tls] cert and key")
	}
	check := c
	if e.TokenFile != "" {
		var err error
		if c.Token, err = admin.ReadToken(e.TokenFile); err != nil {
			r.bad("admin.token_file", "%v", err)
		}
		// The file names a token: an unreadable one is reported here,
		// not once more as a listener exposed without a token.
		check.Token = "token_file"
	}
	r.fields(check.Validate(), adminKeys, "admin")
	r.s.Admin = c
}

// controlAndLocality is [control] and [locality], resolved by their own
// files.
func (r *resolver) controlAndLocality() {
	p, e, s, bad := r.p, &r.e, r.s, r.bad
	s.Control = resolveControl(&e.Control, r)
	s.Control.Enabled = p.md.IsDefined("control")

	_, regionFlag := p.fromFlag["server.region"]
	regionGiven := p.md.IsDefined("server", "region") || regionFlag
	s.Locality = resolveLocality(&e.Locality, p.md.IsDefined("locality"), e.Server.Region, regionGiven, r)
	if s.Locality.Enabled && len(s.Control.Etcd) == 0 && !s.Control.Leader {
		bad("control.leader", "false with [locality] needs control.etcd: with the in-memory store no other process can run the placement service")
	}
}

// tier decides a tier's kind from the keys given and fills its Config.
// Which keys go with which kind is the file's rule; the values are judged
// by the tier's package. The item size is limits.max_item_size.
func (r *resolver) tier(name string, t *TierSection, defMemory int64) TierSettings {
	maxItem := r.s.Proxy.Limits.MaxItemSize
	ts := TierSettings{Name: name, Kind: t.Kind, MaxItemSize: maxItem}
	if ts.Kind == "" {
		ts.Kind = KindEmbedded
		if len(t.Servers) > 0 {
			ts.Kind = KindMemcached
		}
	}
	t.Kind = ts.Kind
	switch ts.Kind {
	case KindEmbedded:
		if len(t.Servers) > 0 {
			r.bad(name+".servers", "servers make a memcached pool, but kind is %q", KindEmbedded)
		}
		ts.Embedded = embedded.Config{MaxBytes: int64(givenOr(&t.Memory, configfile.Size(defMemory))), MaxItemSize: maxItem, Snapshot: t.Snapshot}
		// The item size is limits.max_item_size, judged by the proxy.
		r.fields(ts.Embedded.Validate(), fieldKeys{"MaxBytes": name + ".memory", "MaxItemSize": "", "Snapshot": name + ".snapshot"}, name)
	case KindMemcached:
		if t.Memory != 0 {
			r.bad(name+".memory", "memory sizes an embedded tier; a memcached pool's servers have their own")
		}
		if t.Snapshot != "" {
			r.bad(name+".snapshot", "snapshot saves an embedded tier; a memcached pool's servers keep their own items")
		}
		ts.Servers = append([]ServerEntry(nil), t.Servers...)
		ts.Pool = t.PoolSection
		r.fields(ts.PoolConfig(maxItem, slog.Default()).Validate(), poolKeys(name), name)
	case KindNone:
		if name == "l2" {
			r.bad(name+".kind", "the L2 tier is required; only l1 can be none")
		}
		if len(t.Servers) > 0 || t.Memory != 0 || t.Snapshot != "" {
			r.bad(name+".kind", "a tier of kind none takes no servers, memory or snapshot")
		}
	default:
		r.bad(name+".kind", "%q: want embedded, memcached or none", t.Kind)
	}
	if name == "l2" && t.MaxTTL != 0 {
		r.bad("l2.max_ttl", "max_ttl bounds promoted copies in L1; it belongs in [l1]")
	}
	return ts
}

// given fills a key the file left out (nil) with def, so that the
// effective file shows the value used, and returns the value in force.
func given[T any](key **T, def T) T {
	if *key == nil {
		*key = &def
	}
	return **key
}

// givenOr is given for a key whose zero value means left out.
func givenOr[T comparable](key *T, def T) T {
	var zero T
	if *key == zero {
		*key = def
	}
	return *key
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
