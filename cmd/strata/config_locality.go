package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/loccache"
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

// localityKeys maps the fields of the locality packages' Configs the
// file sets onto their keys. One map serves them all: where two packages
// name a field alike, one key feeds both. Regions[i] and Rules[i] are
// mapped by localityKey.
var localityKeys = map[string]string{
	// tiers/locality (the router), locsvc, placesvc
	"Region": "locality.region", "MaxTTL": "locality.max_ttl", "ForwardTimeout": "locality.forward_timeout",
	"ReadTimeout": "locality.forward_timeout", "Cache": "locality.cache_capacity",
	"CacheCapacity": "locality.cache_capacity", "CounterInterval": "locality.counter_interval",
	"FenceAfter": "locality.fence_after", "Prefix": "locality.store_prefix", "Grace": "locality.grace",
	"CapacityCeiling": "locality.capacity_ceiling",
	// placement.LocalityPolicy
	"HalfLife": "locality.half_life", "MigrateAfter": "locality.migrate_after",
	"MinInterval": "locality.min_interval", "Rate": "locality.rate", "Burst": "locality.burst",
	// keyrule.Rule, under locality.rule[i]
	"Prefix@rule": "prefix", "Regex@rule": "regex", "Field@rule": "field",
}

// resolveLocality maps [locality] onto the locality packages' Configs and
// reports what they refuse; defined is whether the file (or a flag) has
// the section, serverRegion is [server] region as resolved and
// regionGiven whether it was written. The section is left as in force.
func resolveLocality(l *localitySection, defined bool, serverRegion string, regionGiven bool, bad func(string, string, ...any)) localitySettings {
	if !defined {
		return localitySettings{}
	}
	ls := localitySettings{Enabled: true}
	resolveRegions(l, &ls, serverRegion, regionGiven, bad)
	rules, ruleIdx := resolveLocalityRules(l.Rules, bad)
	ls.Rules = rules
	ls.RulePins = resolveRulePins(l, ls.Regions(), bad)

	rc, pc, lc := localityConfigs(l, ls.Regions())
	reportLocality(errors.Join(rc.Validate(), pc.Validate(), lc.Validate(), rules.Validate()), ruleIdx, bad)

	ls.Policy, ls.Cache, ls.ForwardTimeout = pc.Policy, rc.Cache, rc.ForwardTimeout
	ls.Grace, ls.FenceAfter, ls.CounterInterval = pc.Grace, lc.FenceAfter, lc.CounterInterval
	ls.StorePrefix, ls.CapacityCeiling = pc.Prefix, pc.CapacityCeiling
	ls.TLS = resolveLinkTLS(l, bad)

	// The section as in force, for /admin/v1/config.
	p := pc.Policy
	l.MigrateAfter, l.MinInterval, l.MaxTTL, l.HalfLife = duration(p.MigrateAfter), duration(p.MinInterval), duration(rc.MaxTTL), duration(p.HalfLife)
	l.ForwardTimeout, l.Grace, l.CounterInterval = duration(rc.ForwardTimeout), duration(pc.Grace), duration(lc.CounterInterval)
	fence, burst, capacity := duration(lc.FenceAfter), int64(p.Burst), int64(rc.Cache.Capacity)
	l.FenceAfter, l.Rate, l.Burst, l.CacheCapacity = &fence, &p.Rate, &burst, &capacity
	l.CapacityCeiling, l.StorePrefix = &pc.CapacityCeiling, pc.Prefix
	if l.Peers == nil {
		l.Peers = []peerSection{}
	}
	return ls
}

// localityConfigs maps [locality] onto the router's, the placement
// service's and the location service's Configs: each package's defaults,
// with what the file sets. A zero duration is "not given".
func localityConfigs(l *localitySection, regions []string) (locality.Config, placesvc.Config, locsvc.Config) {
	set := func(d *time.Duration, v duration) {
		if v != 0 {
			*d = time.Duration(v)
		}
	}
	rc := locality.DefaultConfig()
	rc.Region = l.Region
	set(&rc.MaxTTL, l.MaxTTL)
	set(&rc.ForwardTimeout, l.ForwardTimeout)
	if l.CacheCapacity != nil {
		rc.Cache.Capacity = int(*l.CacheCapacity)
	}

	pc := placesvc.DefaultConfig()
	pc.Regions, pc.Policy.MaxTTL = regions, rc.MaxTTL
	set(&pc.Policy.HalfLife, l.HalfLife)
	set(&pc.Policy.MigrateAfter, l.MigrateAfter)
	set(&pc.Policy.MinInterval, l.MinInterval)
	set(&pc.Grace, l.Grace) // zero: placesvc fits its default to max_ttl
	if l.Rate != nil {
		pc.Policy.Rate = *l.Rate
	}
	if l.Burst != nil {
		pc.Policy.Burst = float64(*l.Burst)
	}
	if l.CapacityCeiling != nil {
		pc.CapacityCeiling = *l.CapacityCeiling
	}

	lc := locsvc.DefaultConfig()
	lc.Region, lc.ReadTimeout, lc.CacheCapacity = l.Region, rc.ForwardTimeout, rc.Cache.Capacity
	set(&lc.CounterInterval, l.CounterInterval)
	if l.FenceAfter != nil {
		lc.FenceAfter = time.Duration(*l.FenceAfter)
	}
	pc.FenceAfter = lc.FenceAfter
	if l.StorePrefix != "" {
		pc.Prefix, lc.Prefix = l.StorePrefix, l.StorePrefix
	}
	return rc, pc, lc
}

// reportLocality reports each field the locality packages refused in err
// at its key, once per key: where two packages check one value (the store
// prefix, fence_after), the first says it. ruleIdx maps keyrule's rule
// index to the file's.
func reportLocality(err error, ruleIdx []int, bad func(string, string, ...any)) {
	said := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		field, msg := localityField(err)
		key := localityKey(field, ruleIdx)
		if !said[key] {
			said[key] = true
			bad(key, "%v", msg)
		}
	}
	if err != nil {
		walk(err)
	}
}

// localityField is the Go field and the message of one package field
// error; an error of no known type is reported whole.
func localityField(err error) (string, error) {
	var (
		re *locality.FieldError
		pe *placement.FieldError
		se *placesvc.FieldError
		le *locsvc.FieldError
		ke *keyrule.FieldError
	)
	switch {
	case errors.As(err, &re):
		return re.Field, re.Err
	case errors.As(err, &pe):
		return pe.Field, pe.Err
	case errors.As(err, &se):
		return se.Field, se.Err
	case errors.As(err, &le):
		return le.Field, le.Err
	case errors.As(err, &ke):
		return ke.Field, ke.Err
	}
	return "", err
}

// localityKey is the file's key of a Go field: "Rules[2].Regex" is
// locality.rule[N].regex, N the rule's index in the file; "Regions[i]"
// the region (i = 0) or peer i-1's; "locality" when unknown.
func localityKey(field string, ruleIdx []int) string {
	if k, ok := localityKeys[field]; ok {
		return k
	}
	name, rest, _ := strings.Cut(field, "[")
	n, sub, _ := strings.Cut(rest, "]")
	i, err := strconv.Atoi(n)
	switch {
	case err != nil || i < 0:
	case name == "Rules" && i < len(ruleIdx):
		key := fmt.Sprintf("locality.rule[%d]", ruleIdx[i])
		if k := localityKeys[strings.TrimPrefix(sub, ".")+"@rule"]; k != "" {
			key += "." + k
		}
		return key
	case name == "Regions" && i == 0:
		return "locality.region"
	case name == "Regions":
		return fmt.Sprintf("locality.peer[%d].region", i-1)
	}
	return "locality"
}

// resolveRegions checks this strata's region and the peers: the file's
// notion of one's own region and the others', with their links.
func resolveRegions(l *localitySection, ls *localitySettings, serverRegion string, regionGiven bool, bad func(string, string, ...any)) {
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
		case !nameRE.MatchString(p.Region):
			bad(key+".region", "%q: want letters, digits, '_', '-' or '.', at most 64", p.Region)
		case p.Region == l.Region:
			bad(key+".region", "%q is this strata's own region", p.Region)
		case seen[p.Region]:
			bad(key+".region", "%q is given twice", p.Region)
		case p.Link == "":
			seen[p.Region] = true
			bad(key+".link", "every peer needs link = \"host:port\", its region link")
		case checkHostPort(p.Link) != nil:
			seen[p.Region] = true
			bad(key+".link", "%v", checkHostPort(p.Link))
		default:
			seen[p.Region] = true
			ls.Peers = append(ls.Peers, localityPeer(p))
		}
	}
}

// resolveRulePins is every rule's pin by prefix ("" none); a pin names a
// region of the fleet.
func resolveRulePins(l *localitySection, regions []string, bad func(string, string, ...any)) map[string]string {
	pins := map[string]string{}
	for i, r := range l.Rules {
		if r.Prefix == nil {
			continue
		}
		if r.Pin != "" && !slices.Contains(regions, r.Pin) && !slices.ContainsFunc(l.Peers, func(p peerSection) bool { return p.Region == r.Pin }) {
			bad(fmt.Sprintf("locality.rule[%d].pin", i), "%q is neither this region nor a peer's", r.Pin)
			continue
		}
		pins[*r.Prefix] = r.Pin
	}
	return pins
}

// resolveLocalityRules maps [[locality.rule]] onto keyrule's Config, which
// judges the rules; here only what the file leaves out is reported (a
// rule without prefix is skipped). ruleIdx[i] is the file's index of
// keyrule's rule i.
func resolveLocalityRules(rules []localityRuleSection, bad func(string, string, ...any)) (keyrule.Config, []int) {
	var c keyrule.Config
	var ruleIdx []int
	for i, r := range rules {
		key := fmt.Sprintf("locality.rule[%d]", i)
		if r.Prefix == nil {
			bad(key+".prefix", "every rule needs a prefix (\"\" claims every key no longer prefix claims)")
			continue
		}
		kr := keyrule.Rule{Prefix: *r.Prefix, Tag: r.Tag, Delimiter: r.Delimiter, Regex: r.Regex}
		switch {
		case kr.Kind() == keyrule.KindDelimiter && r.Field == nil:
			bad(key+".field", "a delimiter rule needs field, the index (from 0) of the field that names the μ-shard")
		case r.Delimiter == "" && r.Field != nil:
			bad(key+".field", "field goes with delimiter")
		case r.Field != nil:
			kr.Field = int(*r.Field) // int is 64 bits where strata runs
		}
		c.Rules = append(c.Rules, kr)
		ruleIdx = append(ruleIdx, i)
	}
	return c, ruleIdx
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
