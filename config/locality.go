package config

import (
	"crypto/tls"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/internal/configfile"
	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
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
	Evidence        *float64  `toml:"evidence" json:"evidence"`
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

// LocalitySettings is [locality] resolved. Enabled is false without the
// section; every other field is then zero.
type LocalitySettings struct {
	Enabled    bool
	Region     string
	LinkListen string
	Peers      []LocalityPeer // in file order
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
	TLS *LinkTLS
	// RulePins is every rule's pin by prefix, "" for none; applied to
	// the store at start, so a pin removed from the file is lifted.
	RulePins map[string]string
}

// LocalityPeer is one other region and the address of its region link.
type LocalityPeer struct {
	Region string
	Link   string
}

// Regions lists every region of the fleet: this one, then the peers.
func (l LocalitySettings) Regions() []string {
	out := []string{l.Region}
	for _, p := range l.Peers {
		out = append(out, p.Region)
	}
	return out
}

// The key ↔ field maps of the locality packages. Where two packages judge
// one value by the same rule, or one by a stricter rule, the second maps
// it to "" so it is reported once. placesvc's Regions[i] and keyrule's
// Rules[i] are renumbered to the file's first (see renumbered).
var (
	routerKeys = fieldKeys{
		"Region":         "", // placesvc's region name rule is stricter
		"MaxTTL":         "locality.max_ttl",
		"ForwardTimeout": "locality.forward_timeout",
		"Cache":          "locality.cache_capacity",
	}
	placesvcKeys = fieldKeys{
		"Region":          "locality.region",
		"Peers[].Region":  "locality.peer[].region",
		"Prefix":          "locality.store_prefix",
		"Grace":           "locality.grace",
		"CapacityCeiling": "locality.capacity_ceiling",
		"FenceAfter":      "locality.fence_after",
		// placement.LocalityPolicy; MaxTTL is the router's, judged there.
		"MaxTTL": "", "HalfLife": "locality.half_life", "MigrateAfter": "locality.migrate_after",
		"MinInterval": "locality.min_interval", "Rate": "locality.rate", "Burst": "locality.burst",
		"Evidence": "locality.evidence",
	}
	locsvcKeys = fieldKeys{
		"CounterInterval": "locality.counter_interval",
		// Judged by the router (forward_timeout, cache_capacity) and
		// placesvc (region, store_prefix, fence_after) by the same or a
		// stricter rule.
		"Region": "", "ReadTimeout": "", "CacheCapacity": "", "Prefix": "", "FenceAfter": "",
	}
	keyruleKeys = fieldKeys{
		"Rules[]":        "locality.rule[]",
		"Rules[].Prefix": "locality.rule[].prefix",
		"Rules[].Regex":  "locality.rule[].regex",
		"Rules[].Field":  "locality.rule[].field",
	}
	linkKeys = fieldKeys{"Cert": "locality.link_cert", "Key": "locality.link_key", "CA": "locality.link_ca"}
)

var (
	_ fieldError = (*locality.FieldError)(nil)
	_ fieldError = (*placement.FieldError)(nil)
	_ fieldError = (*placesvc.FieldError)(nil)
	_ fieldError = (*locsvc.FieldError)(nil)
	_ fieldError = (*keyrule.FieldError)(nil)
	_ fieldError = (*link.FieldError)(nil)
)

// resolveLocality maps [locality] onto the locality packages' Configs and
// reports what they refuse; defined is whether the file (or a flag) has
// the section, serverRegion is [server] region as resolved and
// regionGiven whether it was written. The section is left as in force.
func resolveLocality(l *localitySection, defined bool, serverRegion string, regionGiven bool, r *resolver) LocalitySettings {
	if !defined {
		return LocalitySettings{}
	}
	// [server] region names the same thing for the sampler: two keys for
	// one value must agree; either may be left out.
	switch {
	case l.Region == "":
		l.Region = serverRegion
	case regionGiven && l.Region != serverRegion:
		r.bad("locality.region", "%q differs from server.region %q: one strata is in one region", l.Region, serverRegion)
	}
	ls := LocalitySettings{Enabled: true, Region: l.Region, LinkListen: l.LinkListen}
	if l.LinkListen == "" {
		r.bad("locality.link_listen", "required: the address other regions forward this region's requests to")
	} else if err := link.CheckListen(l.LinkListen); err != nil {
		r.bad("locality.link_listen", "%v", err)
	}
	for i, p := range l.Peers {
		ls.Peers = append(ls.Peers, LocalityPeer(p))
		if p.Link == "" {
			r.bad(fmt.Sprintf("locality.peer[%d].link", i), "every peer needs link = \"host:port\", its region link")
		} else if err := link.CheckAddress(p.Link); err != nil {
			r.bad(fmt.Sprintf("locality.peer[%d].link", i), "%v", err)
		}
	}
	rules, ruleIdx := resolveLocalityRules(l.Rules, r)
	ls.Rules = rules

	rc, pc, lc := localityConfigs(l, ls.Regions())
	r.fields(rc.Validate(), routerKeys, "locality")
	r.fields(renumbered(pc.Validate(), "Regions", func(i int) string {
		if i == 0 {
			return "Region"
		}
		return fmt.Sprintf("Peers[%d].Region", i-1)
	}), placesvcKeys, "locality")
	r.fields(lc.Validate(), locsvcKeys, "locality")
	r.fields(renumbered(rules.Validate(), "Rules", func(i int) string { return fmt.Sprintf("Rules[%d]", ruleIdx[i]) }), keyruleKeys, "locality")
	ls.RulePins = map[string]string{}
	for i, rule := range l.Rules {
		if rule.Prefix == nil {
			continue
		}
		if err := pc.CheckPin(rule.Pin); rule.Pin != "" && err != nil {
			r.bad(fmt.Sprintf("locality.rule[%d].pin", i), "%v", err)
			continue
		}
		ls.RulePins[*rule.Prefix] = rule.Pin
	}

	ls.Policy, ls.Cache, ls.ForwardTimeout = pc.Policy, rc.Cache, rc.ForwardTimeout
	ls.Grace, ls.FenceAfter, ls.CounterInterval = pc.Grace, lc.FenceAfter, lc.CounterInterval
	ls.StorePrefix, ls.CapacityCeiling = pc.Prefix, pc.CapacityCeiling
	ls.TLS = resolveLinkTLS(l, r)

	// The section as in force, for /admin/v1/config.
	p := pc.Policy
	l.MigrateAfter, l.MinInterval, l.MaxTTL, l.HalfLife = configfile.Duration(p.MigrateAfter), configfile.Duration(p.MinInterval), configfile.Duration(rc.MaxTTL), configfile.Duration(p.HalfLife)
	l.ForwardTimeout, l.Grace, l.CounterInterval = configfile.Duration(rc.ForwardTimeout), configfile.Duration(pc.Grace), configfile.Duration(lc.CounterInterval)
	fence, burst, capacity := configfile.Duration(lc.FenceAfter), int64(p.Burst), int64(rc.Cache.Capacity)
	l.FenceAfter, l.Rate, l.Burst, l.CacheCapacity, l.Evidence = &fence, &p.Rate, &burst, &capacity, &p.Evidence
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
	if l.Evidence != nil {
		pc.Policy.Evidence = *l.Evidence
	}
	if l.CapacityCeiling != nil {
		pc.CapacityCeiling = *l.CapacityCeiling
	}

	lc := locsvc.DefaultConfig()
	lc.Region, lc.ReadTimeout, lc.CacheCapacity, lc.HalfLife = l.Region, rc.ForwardTimeout, rc.Cache.Capacity, pc.Policy.HalfLife
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

// renumberedField is a package's field error whose list index is the
// file's: see renumbered.
type renumberedField struct {
	fieldError
	name string
}

func (e renumberedField) FieldName() string { return e.name }

var fieldListRE = regexp.MustCompile(`^(\w+)\[(\d+)\]`)

// renumbered renames the fields "list[i]..." of err's field errors to
// to(i)+"...": where a package's list is not the file's (keyrule has no
// rule the file left without a prefix; placesvc's Regions are the
// region, then the peers), so the shared key maps apply.
func renumbered(err error, list string, to func(int) string) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, renumbered(e, list, to))
		}
		return errors.Join(out...)
	}
	var fe fieldError
	if !errors.As(err, &fe) {
		return err
	}
	m := fieldListRE.FindStringSubmatch(fe.FieldName())
	if m == nil || m[1] != list {
		return err
	}
	i, _ := strconv.Atoi(m[2])
	return renumberedField{fe, to(i) + strings.TrimPrefix(fe.FieldName(), m[0])}
}

// resolveLocalityRules maps [[locality.rule]] onto keyrule's Config, which
// judges the rules; here only what the file leaves out is reported (a
// rule without prefix is skipped). ruleIdx[i] is the file's index of
// keyrule's rule i.
func resolveLocalityRules(rules []localityRuleSection, r *resolver) (keyrule.Config, []int) {
	var c keyrule.Config
	var ruleIdx []int
	for i, rs := range rules {
		key := fmt.Sprintf("locality.rule[%d]", i)
		if rs.Prefix == nil {
			r.bad(key+".prefix", "every rule needs a prefix (\"\" claims every key no longer prefix claims)")
			continue
		}
		kr := keyrule.Rule{Prefix: *rs.Prefix, Tag: rs.Tag, Delimiter: rs.Delimiter, Regex: rs.Regex}
		switch {
		case kr.Kind() == keyrule.KindDelimiter && rs.Field == nil:
			r.bad(key+".field", "a delimiter rule needs field, the index (from 0) of the field that names the μ-shard")
		case rs.Delimiter == "" && rs.Field != nil:
			r.bad(key+".field", "field goes with delimiter")
		case rs.Field != nil:
			kr.Field = int(*rs.Field) // int is 64 bits where strata runs
		}
		c.Rules = append(c.Rules, kr)
		ruleIdx = append(ruleIdx, i)
	}
	return c, ruleIdx
}

// resolveLinkTLS loads link_cert, link_key and link_ca: all three or
// none (reported at the first key given, which has a line).
func resolveLinkTLS(l *localitySection, r *resolver) *LinkTLS {
	files := link.TLSFiles{Cert: l.LinkCert, Key: l.LinkKey, CA: l.LinkCA}
	if files == (link.TLSFiles{}) {
		return nil
	}
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
		r.bad(given, "mutual TLS on the links needs link_cert, link_key and link_ca together: %s missing", strings.Join(missing, " and "))
		return nil
	}
	server, client, err := link.LoadTLS(files)
	if err != nil {
		r.fields(err, linkKeys, "locality")
		return nil
	}
	return &LinkTLS{Server: server, Client: client}
}

// LinkTLS is the region links' mutual TLS, loaded from [locality]
// link_cert, link_key and link_ca: the same certificate serves the link
// listener and authenticates this strata to its peers.
type LinkTLS struct {
	Server, Client *tls.Config
}
