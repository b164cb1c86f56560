package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/protocol"
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

// The file's defaults; `strata config default` prints them.
const (
	defaultListen       = "127.0.0.1:11211"
	defaultName         = "local"
	defaultDrainTimeout = 10 * time.Second
	defaultL1Memory     = 64 << 20
	defaultL2Memory     = 1 << 30
	defaultL1MaxTTL     = 60 * time.Second
	defaultThreshold    = 32
	defaultMaxInflight  = 1024
	defaultMaxOutbound  = 4 << 20
	maxItemSizeLimit    = 1 << 30 // memcached's largest -I
)

// proxyKeys maps the fields of proxy.Config the file sets onto their keys.
var proxyKeys = map[string]string{
	"Loops":            "server.loops",
	"MaxInflight":      "limits.max_inflight",
	"MaxOutboundBytes": "limits.max_outbound_bytes",
}

// settings is a configuration resolved onto the packages' own Configs.
// Loggers, clocks and the like are added when the server is built.
type settings struct {
	file string
	// eff is the file as it is in force: every key filled with the value
	// used, flags applied. /admin/v1/config shows it.
	eff fileConfig

	DrainTimeout time.Duration
	L1, L2       tierSettings
	Layered      layered.Config
	HotKeys      hotkeys.Config
	Proxy        proxy.Config
	Sampler      sampler.Config
	Admin        admin.Config // Token holds the token file's content
	Control      controlSettings
	Locality     localitySettings
	LogFormat    string
	LogLevel     slog.Level
}

// tierSettings is one tier: its kind and the config of that kind.
type tierSettings struct {
	Name        string // "l1" or "l2"
	Kind        string
	MaxItemSize int // limits.max_item_size
	Embedded    embedded.Config
	Servers     []serverEntry
	Pool        poolSection
}

// loadSettings reads path (none when empty), applies the flags given and
// resolves the result. Every problem is reported, each with its line or
// flag; a configuration with any is rejected whole.
func loadSettings(path string, fl *serveFlags) (*settings, error) {
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
	s.file = path
	return s, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// resolve fills defaults, checks every key and builds the packages'
// Configs.
func (p *parsedFile) resolve() (*settings, configErrors) {
	var errs configErrors
	bad := func(key, format string, args ...any) {
		errs = append(errs, p.errAt(key, format, args...))
	}
	e := p.fc // a copy: the parsed file stays as written
	s := &settings{}

	// [server]
	e.Server.Listen = orDefault(e.Server.Listen, defaultListen)
	if err := checkListen(e.Server.Listen); err != nil {
		bad("server.listen", "%v", err)
	}
	e.Server.Cluster = orDefault(e.Server.Cluster, defaultName)
	e.Server.Region = orDefault(e.Server.Region, defaultName)
	for _, k := range []struct{ key, v string }{{"server.cluster", e.Server.Cluster}, {"server.region", e.Server.Region}} {
		if !nameRE.MatchString(k.v) {
			bad(k.key, "%q: want letters, digits, '_', '-' or '.', at most 64", k.v)
		}
	}
	loops := int64(0)
	if e.Server.Loops != nil {
		loops = *e.Server.Loops
	}
	e.Server.Loops = &loops
	if e.Server.DrainTimeout == 0 {
		e.Server.DrainTimeout = duration(defaultDrainTimeout)
	}
	s.DrainTimeout = time.Duration(e.Server.DrainTimeout)

	// [limits], first: the tiers' item size follows it.
	if e.Limits.MaxItemSize == 0 {
		e.Limits.MaxItemSize = protocol.DefaultMaxItemSize
	}
	if e.Limits.MaxItemSize < 1024 || e.Limits.MaxItemSize > maxItemSizeLimit {
		bad("limits.max_item_size", "%s is out of range: 1KiB to 1GiB", e.Limits.MaxItemSize)
	}
	inflight := int64(defaultMaxInflight)
	if e.Limits.MaxInflight != nil {
		inflight = *e.Limits.MaxInflight
		if inflight == 0 { // a value here; the proxy's Config reads 0 as its default
			bad("limits.max_inflight", "0 is out of range: 1 to %d", proxy.MaxInflightLimit)
		}
	}
	e.Limits.MaxInflight = &inflight
	if e.Limits.MaxOutboundBytes == 0 {
		e.Limits.MaxOutboundBytes = defaultMaxOutbound
	}
	// flush_all: the embedded tiers are this process's alone, so flush_all
	// empties them as memcached's does by default; memcached servers in a
	// pool may be shared with other clients and other strata, so there it
	// stays refused unless the file says otherwise. The default is decided
	// once the tiers are known, below.
	flushSet := e.Limits.FlushAll != nil
	flush := flushSet && *e.Limits.FlushAll
	s.Proxy = proxy.Config{
		Listen:           e.Server.Listen,
		Loops:            int(loops),
		Limits:           protocol.Limits{MaxItemSize: int(e.Limits.MaxItemSize), DisableFlush: !flush},
		MaxInflight:      int(inflight),
		MaxOutboundBytes: int(e.Limits.MaxOutboundBytes),
		Version:          version,
	}
	// The proxy's own bounds; the listen address was checked above.
	var pfe *proxy.FieldError
	if err := s.Proxy.Check(); errors.As(err, &pfe) && proxyKeys[pfe.Field] != "" {
		bad(proxyKeys[pfe.Field], "%v", pfe.Err)
	}

	// [l1], [l2]
	s.L1 = p.resolveTier("l1", &e.L1, defaultL1Memory, int(e.Limits.MaxItemSize), bad)
	s.L2 = p.resolveTier("l2", &e.L2, defaultL2Memory, int(e.Limits.MaxItemSize), bad)
	if !flushSet {
		flush = s.L1.Kind != KindMemcached && s.L2.Kind != KindMemcached
	}
	e.Limits.FlushAll = &flush
	s.Proxy.Limits.DisableFlush = !flush
	if e.L1.MaxTTL == 0 {
		e.L1.MaxTTL = duration(defaultL1MaxTTL)
	}
	if err := layered.CheckL1MaxTTL(time.Duration(e.L1.MaxTTL)); err != nil {
		bad("l1.max_ttl", "%v", err)
	}

	// [promotion]
	s.Layered = layered.Config{L1MaxTTL: time.Duration(e.L1.MaxTTL)}
	threshold := int64(defaultThreshold)
	if e.Promotion.Threshold != nil {
		threshold = *e.Promotion.Threshold
	}
	e.Promotion.Threshold = &threshold
	if err := promote.CheckThreshold(threshold); err != nil {
		bad("promotion.threshold", "%v", err)
	} else {
		s.Layered.Threshold = uint32(threshold)
	}
	seen := map[string]bool{}
	for i, r := range e.Promotion.Rules {
		key := fmt.Sprintf("promotion.rule[%d]", i)
		switch {
		case r.Prefix == nil || *r.Prefix == "":
			bad(key+".prefix", "every rule needs a non-empty prefix")
			continue
		case seen[*r.Prefix]:
			bad(key+".prefix", "%q is given twice", *r.Prefix)
			continue
		case r.Threshold == nil:
			bad(key+".threshold", "every rule needs a threshold")
			continue
		case promote.CheckThreshold(*r.Threshold) != nil:
			bad(key+".threshold", "%v", promote.CheckThreshold(*r.Threshold))
			continue
		}
		seen[*r.Prefix] = true
		s.Layered.Rules = append(s.Layered.Rules, promote.Rule{Prefix: *r.Prefix, Threshold: uint32(*r.Threshold)})
	}
	if len(errs) == 0 {
		if _, err := promote.NewPolicy(s.Layered.Threshold, s.Layered.Rules); err != nil {
			bad("promotion", "%v", err)
		}
	}

	// [hotkeys]
	s.HotKeys = resolveHotKeys(&e.HotKeys, bad)

	// [sampler]
	rate := int64(sampler.DefaultRate)
	if e.Sampler.Rate != nil {
		rate = *e.Sampler.Rate
		if rate < 0 {
			bad("sampler.rate", "%d is negative: 0 turns sampling off, R samples one key in R", rate)
		}
	}
	e.Sampler.Rate = &rate
	if e.Sampler.RotateSize == 0 {
		e.Sampler.RotateSize = byteSize(sampler.DefaultMaxFileBytes)
	}
	if e.Sampler.RotateAge == 0 {
		e.Sampler.RotateAge = duration(sampler.DefaultMaxFileAge)
	}
	if e.Sampler.Window == 0 {
		e.Sampler.Window = duration(sampler.DefaultWindow)
	}
	var fams []sampler.FamilyRule
	for i, f := range e.Sampler.Families {
		r := family.Rule{Match: f.Match, Family: f.Family}
		if _, err := family.New([]family.Rule{r}); err != nil {
			bad(fmt.Sprintf("sampler.family[%d]", i), "%v", strings.TrimPrefix(err.Error(), "family rule 0: "))
			continue
		}
		fams = append(fams, r)
	}
	s.Sampler = sampler.Config{
		Rate:         uint64(max(rate, 0)),
		Dir:          e.Sampler.Dir,
		MaxFileBytes: int64(e.Sampler.RotateSize),
		MaxFileAge:   time.Duration(e.Sampler.RotateAge),
		Gzip:         e.Sampler.Gzip,
		Cluster:      e.Server.Cluster,
		Region:       e.Server.Region,
		Families:     fams,
		Window:       time.Duration(e.Sampler.Window),
	}

	// [log]
	e.Log.Format = orDefault(e.Log.Format, "text")
	if e.Log.Format != "text" && e.Log.Format != "json" {
		bad("log.format", "%q: want text or json", e.Log.Format)
	}
	s.LogFormat = e.Log.Format
	e.Log.Level = orDefault(e.Log.Level, "info")
	if err := s.LogLevel.UnmarshalText([]byte(e.Log.Level)); err != nil {
		bad("log.level", "%q: want debug, info, warn or error", e.Log.Level)
	}

	// [admin]
	e.Admin.Listen = orDefault(e.Admin.Listen, admin.DefaultListen)
	if e.Admin.AllowedHosts == nil {
		e.Admin.AllowedHosts = []string{} // the effective config shows [], as the default file
	}
	s.Admin = admin.Config{Listen: e.Admin.Listen, AllowedHosts: slices.Clone(e.Admin.AllowedHosts)}
	for _, h := range e.Admin.AllowedHosts {
		if h == "" || strings.ContainsAny(h, " /:@") && net.ParseIP(h) == nil {
			bad("admin.allowed_hosts", "%q: want a host name or address, without port", h)
		}
	}
	if err := checkListen(e.Admin.Listen); err != nil {
		bad("admin.listen", "%v", err)
	}
	if e.Admin.TokenFile != "" {
		tok, err := readToken(e.Admin.TokenFile)
		if err != nil {
			bad("admin.token_file", "%v", err)
		}
		s.Admin.Token = tok
	}
	if host, _, err := net.SplitHostPort(e.Admin.Listen); err == nil && !admin.IsLoopback(host) && e.Admin.TokenFile == "" {
		bad("admin.listen", "%q is reachable from other hosts: set admin.token_file, or listen on loopback", e.Admin.Listen)
	}

	// [control]
	s.Control = resolveControl(&e.Control, bad)
	s.Control.Enabled = p.md.IsDefined("control")

	// [locality]
	_, regionFlag := p.fromFlag["server.region"]
	regionGiven := p.md.IsDefined("server", "region") || regionFlag
	s.Locality = resolveLocality(&e.Locality, p.md.IsDefined("locality"), e.Server.Region, regionGiven, bad)
	if s.Locality.Enabled && len(s.Control.Etcd) == 0 && !s.Control.Leader {
		bad("control.leader", "false with [locality] needs control.etcd: with the in-memory store no other process can run the placement service")
	}

	s.eff = e
	return s, errs
}

// resolveTier decides a tier's kind from the keys given and fills its
// Config.
func (p *parsedFile) resolveTier(name string, t *tierSection, defMemory int64, maxItem int, bad func(string, string, ...any)) tierSettings {
	ts := tierSettings{Name: name, Kind: t.Kind, MaxItemSize: maxItem}
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
			bad(name+".servers", "servers make a memcached pool, but kind is %q", KindEmbedded)
		}
		if t.Memory == 0 {
			t.Memory = byteSize(defMemory)
		}
		if int64(t.Memory) < int64(maxItem)+embedded.ItemOverhead {
			bad(name+".memory", "%s cannot hold one item of limits.max_item_size (%s)", t.Memory, byteSize(maxItem))
		}
		ts.Embedded = embedded.Config{MaxBytes: int64(t.Memory), MaxItemSize: maxItem}
	case KindMemcached:
		if t.Memory != 0 {
			bad(name+".memory", "memory sizes an embedded tier; a memcached pool's servers have their own")
		}
		if len(t.Servers) == 0 {
			bad(name+".servers", "a memcached tier needs at least one server")
		}
		seen := map[string]bool{}
		for _, sv := range t.Servers {
			if seen[sv.Addr] {
				bad(name+".servers", "%s is listed twice", sv.Addr)
			}
			seen[sv.Addr] = true
		}
		ts.Servers = append([]serverEntry(nil), t.Servers...)
		ts.Pool = t.poolSection
		for _, err := range checkPool(ts) {
			bad(name+"."+err.Key, "%s", err.Msg)
		}
		t.poolSection = ts.Pool
	case KindNone:
		if name == "l2" {
			bad(name+".kind", "the L2 tier is required; only l1 can be none")
		}
		if len(t.Servers) > 0 || t.Memory != 0 {
			bad(name+".kind", "a tier of kind none takes no servers or memory")
		}
	default:
		bad(name+".kind", "%q: want embedded, memcached or none", t.Kind)
	}
	if name == "l2" && t.MaxTTL != 0 {
		bad("l2.max_ttl", "max_ttl bounds promoted copies in L1; it belongs in [l1]")
	}
	return ts
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port", addr)
	}
	if port == "" {
		return fmt.Errorf("%q: missing port", addr)
	}
	return nil
}

// readToken reads a bearer token file: its content without surrounding
// white space, which must not be empty.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading the token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s: the token must be one word", path)
	}
	return tok, nil
}
