package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/loccache"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/placement"
)

// localitySection is [locality]: this strata's region, its region link,
// the other regions' links, the rules that give keys a μ-shard, and the
// placement policy. The section's presence turns locality routing on.
type localitySection struct {
	Region     string `toml:"region" json:"region"`
	LinkListen string `toml:"link_listen" json:"link_listen"`

	// The placement policy's keys, named by the issue.
	MigrateAfter duration `toml:"migrate_after" json:"migrate_after"`
	MinInterval  duration `toml:"min_interval" json:"min_interval"`
	MaxTTL       duration `toml:"max_ttl" json:"max_ttl"`

	// Ours (documented in `strata config default`).
	ForwardTimeout  duration  `toml:"forward_timeout" json:"forward_timeout"`
	Grace           duration  `toml:"grace" json:"grace"`
	FenceAfter      *duration `toml:"fence_after" json:"fence_after"`
	CounterInterval duration  `toml:"counter_interval" json:"counter_interval"`
	HalfLife        duration  `toml:"half_life" json:"half_life"`
	Rate            *float64  `toml:"rate" json:"rate"`
	Burst           *int64    `toml:"burst" json:"burst"`
	CacheCapacity   *int64    `toml:"cache_capacity" json:"cache_capacity"`
	CapacityCeiling *float64  `toml:"capacity_ceiling" json:"capacity_ceiling"`
	StorePrefix     string    `toml:"store_prefix" json:"store_prefix"`
	LinkCert        string    `toml:"link_cert" json:"link_cert"`
	LinkKey         string    `toml:"link_key" json:"link_key"`
	LinkCA          string    `toml:"link_ca" json:"link_ca"`

	Peers []peerSection         `toml:"peer" json:"peer,omitempty"`
	Rules []localityRuleSection `toml:"rule" json:"rule,omitempty"`
}

type peerSection struct {
	Region string `toml:"region" json:"region"`
	Link   string `toml:"link" json:"link"`
}

// localityRuleSection is one [[locality.rule]]: a prefix and exactly one
// way to take the μ-shard's field from the key.
type localityRuleSection struct {
	Prefix    *string `toml:"prefix" json:"prefix"`
	Tag       bool    `toml:"tag" json:"tag,omitempty"`
	Delimiter string  `toml:"delimiter" json:"delimiter,omitempty"`
	Field     *int64  `toml:"field" json:"field,omitempty"`
	Regex     string  `toml:"regex" json:"regex,omitempty"`
	// Pin keeps every μ-shard of the rule in one region, whatever the
	// policy would choose ("" none; a μ-shard's own pin wins).
	Pin string `toml:"pin" json:"pin,omitempty"`
}

// Defaults of [locality] beyond the policy's own (placement's).
const (
	defaultLocalityMaxTTL   = 6 * time.Hour // equal to min_interval's default, the least it may be
	defaultForwardTimeout   = time.Second   // a WAN round trip with room to spare
	defaultLocalityGrace    = 30 * time.Second
	defaultFenceAfter       = 30 * time.Second
	defaultCounterInterval  = time.Second
	defaultLocalityPrefix   = "locality/"         // loctable.DefaultPrefix
	maxLocalityTTL          = 30 * 24 * time.Hour // memcached's longest relative TTL
	minLocalityGraceOverTTL = time.Second
)

// localitySettings is [locality] resolved. Enabled is false without the
// section; every other field is then zero.
type localitySettings struct {
	Enabled    bool
	Region     string
	LinkListen string
	Peers      []localityPeer // in file order
	Rules      keyrule.Config
	Policy     placement.LocalityPolicy // validated: defaults filled
	Cache      loccache.Config

	ForwardTimeout time.Duration
	Grace          time.Duration
	// FenceAfter: how long a strata that lost the store serves its
	// region's μ-shards on its view (0: forever).
	FenceAfter      time.Duration
	CounterInterval time.Duration
	StorePrefix     string
	// CapacityCeiling is the fraction of a region's cache memory in use
	// at or above which the placement service moves no μ-shard there.
	CapacityCeiling float64
	// TLS is the links' mutual TLS; nil: plain TCP.
	TLS *linkTLS
	// RulePins is every rule's pin by prefix, "" for none; applied to
	// the store at start, so a pin removed from the file is lifted.
	RulePins map[string]string
}

// localityPeer is one other region and the address of its region link.
type localityPeer struct {
	Region string
	Link   string
}

// Regions lists every region of the fleet: this one, then the peers.
func (l localitySettings) Regions() []string {
	out := []string{l.Region}
	for _, p := range l.Peers {
		out = append(out, p.Region)
	}
	return out
}

// storePrefixRE: a relative path ending in '/' (the store puts its own
// namespace before it), so the service's keys (rows/, acks/, ...) never
// run into another prefix.
var storePrefixRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/$`)

// resolveLocality fills [locality]'s defaults and checks it; defined is
// whether the file (or a flag) has the section, serverRegion is [server]
// region as resolved and regionGiven whether it was written.
func resolveLocality(l *localitySection, defined bool, serverRegion string, regionGiven bool, bad func(string, string, ...any)) localitySettings {
	if !defined {
		return localitySettings{}
	}
	ls := localitySettings{Enabled: true}

	// Region: [server] region names the same thing for the sampler, so
	// the two must agree; either may be left out.
	switch {
	case l.Region == "":
		l.Region = serverRegion
	case regionGiven && l.Region != serverRegion:
		bad("locality.region", "%q differs from server.region %q: one strata is in one region", l.Region, serverRegion)
	}
	if !nameRE.MatchString(l.Region) {
		bad("locality.region", "%q: want letters, digits, '_', '-' or '.', at most 64", l.Region)
	}
	ls.Region = l.Region

	if l.LinkListen == "" {
		bad("locality.link_listen", "required: the address other regions forward this region's requests to")
	} else if err := checkListen(l.LinkListen); err != nil {
		bad("locality.link_listen", "%v", err)
	}
	ls.LinkListen = l.LinkListen

	seen := map[string]bool{l.Region: true}
	for i, p := range l.Peers {
		key := fmt.Sprintf("locality.peer[%d]", i)
		switch {
		case p.Region == "":
			bad(key+".region", "every peer needs a region")
			continue
		case !nameRE.MatchString(p.Region):
			bad(key+".region", "%q: want letters, digits, '_', '-' or '.', at most 64", p.Region)
			continue
		case p.Region == l.Region:
			bad(key+".region", "%q is this strata's own region", p.Region)
			continue
		case seen[p.Region]:
			bad(key+".region", "%q is given twice", p.Region)
			continue
		}
		seen[p.Region] = true
		if p.Link == "" {
			bad(key+".link", "every peer needs link = \"host:port\", its region link")
			continue
		}
		if err := checkHostPort(p.Link); err != nil {
			bad(key+".link", "%v", err)
			continue
		}
		ls.Peers = append(ls.Peers, localityPeer(p))
	}

	ls.Rules = resolveLocalityRules(l.Rules, bad)
	ls.RulePins = map[string]string{}
	for i, r := range l.Rules {
		if r.Prefix == nil {
			continue
		}
		if r.Pin != "" && !seen[r.Pin] {
			bad(fmt.Sprintf("locality.rule[%d].pin", i), "%q is neither this region nor a peer's", r.Pin)
			continue
		}
		ls.RulePins[*r.Prefix] = r.Pin
	}

	// The policy: durations first, so the pairing check below sees the
	// values in force.
	fill := func(d *duration, def time.Duration) {
		if *d == 0 {
			*d = duration(def)
		}
	}
	fill(&l.MigrateAfter, placement.DefaultMigrateAfter)
	fill(&l.MinInterval, placement.DefaultMinInterval)
	fill(&l.MaxTTL, defaultLocalityMaxTTL)
	fill(&l.HalfLife, placement.DefaultHalfLife)
	fill(&l.ForwardTimeout, defaultForwardTimeout)
	fill(&l.Grace, defaultLocalityGrace)
	fill(&l.CounterInterval, defaultCounterInterval)
	if l.FenceAfter == nil {
		f := duration(defaultFenceAfter)
		l.FenceAfter = &f
	}
	if l.Rate == nil {
		r := float64(placement.DefaultRate)
		l.Rate = &r
	}
	if l.Burst == nil {
		b := int64(placement.DefaultBurst)
		l.Burst = &b
	}
	if l.CacheCapacity == nil {
		c := int64(loccache.DefaultCapacity)
		l.CacheCapacity = &c
	}
	if l.StorePrefix == "" {
		l.StorePrefix = defaultLocalityPrefix
	}
	if l.CapacityCeiling == nil {
		c := placesvc.DefaultCapacityCeiling
		l.CapacityCeiling = &c
	}

	maxTTL := time.Duration(l.MaxTTL)
	if maxTTL < time.Second || maxTTL > maxLocalityTTL {
		bad("locality.max_ttl", "%s is out of range: 1s to 720h (memcached's longest relative TTL)", l.MaxTTL)
	}
	if l.MinInterval < l.MaxTTL {
		bad("locality.min_interval", "%s is below max_ttl (%s): a μ-shard could return to a region that still holds its stale values", l.MinInterval, l.MaxTTL)
	}
	if d := time.Duration(l.HalfLife); d < time.Second {
		bad("locality.half_life", "%s is out of range: at least 1s", l.HalfLife)
	}
	if d := time.Duration(l.ForwardTimeout); d < time.Millisecond || d > time.Minute {
		bad("locality.forward_timeout", "%s is out of range: 1ms to 1m", l.ForwardTimeout)
	}
	if d := time.Duration(l.Grace); d < minLocalityGraceOverTTL || d > maxLocalityTTL {
		bad("locality.grace", "%s is out of range: 1s to 720h", l.Grace)
	} else if l.Grace > l.MaxTTL {
		// Past max_ttl the source holds nothing worth reading.
		bad("locality.grace", "%s is above max_ttl (%s): the source's values have expired by then", l.Grace, l.MaxTTL)
	}
	if d := time.Duration(*l.FenceAfter); d != 0 && (d < time.Second || d > 24*time.Hour) {
		bad("locality.fence_after", "%s is out of range: 0s (off) or 1s to 24h", *l.FenceAfter)
	}
	if d := time.Duration(l.CounterInterval); d < 10*time.Millisecond || d > time.Hour {
		bad("locality.counter_interval", "%s is out of range: 10ms to 1h", l.CounterInterval)
	}
	if r := *l.Rate; !(r > 0) || r > 1e6 {
		bad("locality.rate", "%v is out of range: above 0, at most 1000000 migrations per second", r)
	}
	if b := *l.Burst; b < 1 || b > 1e6 {
		bad("locality.burst", "%d is out of range: 1 to 1000000", b)
	}
	if c := *l.CacheCapacity; c < 1 || c > loccache.MaxCapacity {
		bad("locality.cache_capacity", "%d is out of range: 1 to %d entries per event loop", c, loccache.MaxCapacity)
	} else {
		ls.Cache = loccache.Config{Capacity: int(c)}
	}
	if c := *l.CapacityCeiling; !(c > 0) || c > 1 {
		bad("locality.capacity_ceiling", "%v is out of range: above 0, at most 1 (the fraction of the region's cache memory in use)", c)
	}
	if !storePrefixRE.MatchString(l.StorePrefix) {
		bad("locality.store_prefix", "%q: want a path ending in '/', e.g. %q", l.StorePrefix, defaultLocalityPrefix)
	}
	pol, err := placement.LocalityPolicy{
		HalfLife: time.Duration(l.HalfLife), MigrateAfter: time.Duration(l.MigrateAfter),
		MinInterval: time.Duration(l.MinInterval), MaxTTL: maxTTL,
		Rate: *l.Rate, Burst: float64(*l.Burst),
	}.Validated()
	if err == nil {
		ls.Policy = pol
	}
	// Otherwise a key above has been reported already.

	ls.TLS = resolveLinkTLS(l, bad)

	ls.ForwardTimeout = time.Duration(l.ForwardTimeout)
	ls.Grace = time.Duration(l.Grace)
	ls.FenceAfter = time.Duration(*l.FenceAfter)
	ls.CounterInterval = time.Duration(l.CounterInterval)
	ls.StorePrefix = l.StorePrefix
	ls.CapacityCeiling = *l.CapacityCeiling
	if l.Peers == nil {
		l.Peers = []peerSection{}
	}
	return ls
}

// resolveLocalityRules checks each [[locality.rule]] where its keys are,
// then lets keyrule judge the whole set.
func resolveLocalityRules(rules []localityRuleSection, bad func(string, string, ...any)) keyrule.Config {
	var c keyrule.Config
	seen := map[string]bool{}
	ok := true
	for i, r := range rules {
		kr, good := checkLocalityRule(fmt.Sprintf("locality.rule[%d]", i), r, seen, bad)
		if !good {
			ok = false
			continue
		}
		c.Rules = append(c.Rules, kr)
	}
	if ok && len(c.Rules) > 0 {
		if _, err := keyrule.New(c); err != nil {
			bad("locality.rule", "%v", err)
		}
	}
	return c
}

// checkLocalityRule reports the first problem of one rule, at its key.
func checkLocalityRule(key string, r localityRuleSection, seen map[string]bool, bad func(string, string, ...any)) (keyrule.Rule, bool) {
	kinds := 0
	for _, set := range []bool{r.Tag, r.Delimiter != "", r.Regex != ""} {
		if set {
			kinds++
		}
	}
	switch {
	case r.Prefix == nil:
		bad(key+".prefix", "every rule needs a prefix (\"\" claims every key no longer prefix claims)")
		return keyrule.Rule{}, false
	case seen[*r.Prefix]:
		bad(key+".prefix", "%q is given twice", *r.Prefix)
		return keyrule.Rule{}, false
	}
	seen[*r.Prefix] = true
	switch {
	case kinds != 1:
		bad(key, "set exactly one of tag = true, delimiter (with field) or regex")
		return keyrule.Rule{}, false
	case r.Delimiter != "" && r.Field == nil:
		bad(key+".field", "a delimiter rule needs field, the index (from 0) of the field that names the μ-shard")
		return keyrule.Rule{}, false
	case r.Delimiter == "" && r.Field != nil:
		bad(key+".field", "field goes with delimiter")
		return keyrule.Rule{}, false
	}
	kr := keyrule.Rule{Prefix: *r.Prefix, Tag: r.Tag, Delimiter: r.Delimiter, Regex: r.Regex}
	if r.Field != nil {
		if *r.Field < 0 || *r.Field > keyrule.MaxField {
			bad(key+".field", "%d is out of range: 0 to %d", *r.Field, keyrule.MaxField)
			return keyrule.Rule{}, false
		}
		kr.Field = int(*r.Field)
	}
	if r.Regex != "" {
		re, err := regexp.Compile(r.Regex)
		if err != nil {
			bad(key+".regex", "%v", err)
			return keyrule.Rule{}, false
		}
		if n := re.NumSubexp(); n != 1 {
			bad(key+".regex", "%q has %d capture groups: want exactly one, the μ-shard's field", r.Regex, n)
			return keyrule.Rule{}, false
		}
	}
	// keyrule's own per-rule checks (a prefix with a space, ...).
	if _, err := keyrule.New(keyrule.Config{Rules: []keyrule.Rule{kr}}); err != nil {
		bad(key+".prefix", "%s", strings.TrimPrefix(err.Error(), "rule 0: "))
		return keyrule.Rule{}, false
	}
	return kr, true
}

// resolveLinkTLS loads link_cert, link_key and link_ca: all three or
// none. The certificate is presented both ways (server to the peers that
// dial in, client to the peers this strata dials), so it must be valid for
// both uses; link_ca verifies the peers' certificates both ways.
func resolveLinkTLS(l *localitySection, bad func(string, string, ...any)) *linkTLS {
	if l.LinkCert == "" && l.LinkKey == "" && l.LinkCA == "" {
		return nil
	}
	// Reported at the first key given, which has a line.
	var given string
	var missing []string
	for _, f := range []struct{ key, v string }{{"link_cert", l.LinkCert}, {"link_key", l.LinkKey}, {"link_ca", l.LinkCA}} {
		switch {
		case f.v == "":
			missing = append(missing, f.key)
		case given == "":
			given = "locality." + f.key
		}
	}
	if len(missing) > 0 {
		bad(given, "mutual TLS on the links needs link_cert, link_key and link_ca together: %s missing", strings.Join(missing, " and "))
		return nil
	}
	cert, err := tls.LoadX509KeyPair(l.LinkCert, l.LinkKey)
	if err != nil {
		bad("locality.link_cert", "%v", err)
		return nil
	}
	ca, err := os.ReadFile(l.LinkCA)
	if err != nil {
		bad("locality.link_ca", "%v", err)
		return nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		bad("locality.link_ca", "%s holds no PEM certificate", l.LinkCA)
		return nil
	}
	return &linkTLS{
		server: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
			ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert},
		client: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, RootCAs: pool},
	}
}
