package config

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/plane"
	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
)

const localityConfig = `[server]
region = "a"
[locality]
link_listen = "127.0.0.1:11311"
migrate_after = "2s"
min_interval = "1h"
max_ttl = "30m"
forward_timeout = "200ms"
grace = "5s"
counter_interval = "250ms"
half_life = "10m"
rate = 2.5
burst = 7
evidence = 2
cache_capacity = 1024
capacity_ceiling = 0.75
store_prefix = "fleet1/locality/"
[[locality.peer]]
region = "b"
link = "127.0.0.1:11312"
[[locality.peer]]
region = "c"
link = "127.0.0.1:11313"
[[locality.rule]]
prefix = "u:"
tag = true
[[locality.rule]]
prefix = "g:"
delimiter = ":"
field = 1
[[locality.rule]]
prefix = "s"
regex = '^s(\d+)/'
pin = "c"
`

func TestLocalitySectionMapsOntoThePackages(t *testing.T) {
	s, err := Load(writeFile(t, "loc.toml", localityConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := s.Locality
	if !l.Enabled || l.Region != "a" || l.LinkListen != "127.0.0.1:11311" {
		t.Fatalf("resolved: %+v", l)
	}
	if want := []LocalityPeer{{"b", "127.0.0.1:11312"}, {"c", "127.0.0.1:11313"}}; !reflect.DeepEqual(l.Peers, want) {
		t.Errorf("peers: %+v", l.Peers)
	}
	if got := l.Regions(); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("regions: %v", got)
	}
	wantRules := []keyrule.Rule{{Prefix: "u:", Tag: true}, {Prefix: "g:", Delimiter: ":", Field: 1}, {Prefix: "s", Regex: `^s(\d+)/`}}
	if !reflect.DeepEqual(l.Rules.Rules, wantRules) {
		t.Errorf("rules: %+v", l.Rules.Rules)
	}
	rs, err := keyrule.New(l.Rules)
	if err != nil {
		t.Fatal(err)
	}
	for key, name := range map[string]string{"u:{42}:p": "u: 42", "g:7:x": "g: 7", "s12/x": "s 12"} {
		if got := rs.Name(rs.Match([]byte(key))); got != name {
			t.Errorf("%s: μ-shard %q, want %q", key, got, name)
		}
	}
	if want := map[string]string{"u:": "", "g:": "", "s": "c"}; !reflect.DeepEqual(l.RulePins, want) {
		t.Errorf("rule pins: %v", l.RulePins)
	}
	want := placement.LocalityPolicy{HalfLife: 10 * time.Minute, MigrateAfter: 2 * time.Second,
		MinInterval: time.Hour, MaxTTL: 30 * time.Minute, Rate: 2.5, Burst: 7, Evidence: 2}
	if l.Policy != want {
		t.Errorf("policy: %+v, want %+v", l.Policy, want)
	}
	if l.ForwardTimeout != 200*time.Millisecond || l.Grace != 5*time.Second || l.CounterInterval != 250*time.Millisecond ||
		l.Cache.Capacity != 1024 || l.StorePrefix != "fleet1/locality/" || l.CapacityCeiling != 0.75 {
		t.Errorf("extras: %+v", l)
	}

	// Without the section: off, and the effective config shows nothing
	// filled in it.
	none, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if none.Locality.Enabled || none.Effective.Locality.MaxTTL != 0 {
		t.Fatalf("locality without a section: %+v", none.Locality)
	}

	// The smallest section: defaults everywhere, region from [server].
	s, err = Load(writeFile(t, "min.toml", "[server]\nregion = \"eu\"\n[locality]\nlink_listen = \"127.0.0.1:0\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := s.Locality; l.Region != "eu" || l.Policy.MinInterval != 6*time.Hour || l.Policy.MaxTTL != 6*time.Hour ||
		l.Policy.MigrateAfter != 10*time.Minute || l.ForwardTimeout != time.Second || l.StorePrefix != "locality/" ||
		len(l.Rules.Rules) != 0 || len(l.Peers) != 0 || l.CapacityCeiling != 0.9 {
		t.Fatalf("defaults: %+v", l)
	}
}

func TestLocalityErrorsNameKeyAndLine(t *testing.T) {
	bad := writeFile(t, "bad.toml", `[server]
region = "a"
[locality]
region = "b"
migrate_after = "1m"
min_interval = "1h"
max_ttl = "2h"
forward_timeout = "0s"
rate = -1
cache_capacity = 0
store_prefix = "/abs/"
[[locality.peer]]
region = "b"
link = "127.0.0.1:1"
[[locality.peer]]
region = "c"
link = "nohost"
[[locality.peer]]
region = "c"
link = "127.0.0.1:2"
[[locality.rule]]
prefix = "u:"
tag = true
delimiter = ":"
[[locality.rule]]
prefix = "g:"
delimiter = ":"
[[locality.rule]]
prefix = "r:"
regex = '^r:(\d+):(\d+)'
[[locality.rule]]
prefix = "u:"
regex = '^u:(\d+)'
[[locality.rule]]
prefix = "x y"
tag = true
[[locality.rule]]
tag = true
[[locality.rule]]
prefix = "q:"
tag = true
pin = "z"
`)
	code, _, errOut := checkConfig(t, bad)
	if code == 0 {
		t.Fatal("a bad [locality] passed the check")
	}
	for _, want := range []string{
		bad + `:4: locality.region: "b" differs from server.region "a"`,
		bad + `:3: locality.link_listen: required`,
		bad + `:6: locality.min_interval: 1h is below max_ttl (2h)`,
		bad + `:9: locality.rate: -1 is out of range`,
		bad + `:10: locality.cache_capacity: 0 is out of range`,
		bad + `:11: locality.store_prefix: "/abs/": want a path ending in '/'`,
		bad + `:13: locality.peer[0].region: "b" is this strata's own region`,
		bad + `:17: locality.peer[1].link: server "nohost": want host:port`,
		bad + `:19: locality.peer[2].region: "c" is given twice`,
		bad + `:21: locality.rule[0]: set exactly one of tag = true, delimiter (with field) or regex`,
		bad + `:25: locality.rule[1].field: a delimiter rule needs field`,
		bad + `:30: locality.rule[2].regex: "^r:(\\d+):(\\d+)" has 2 capture groups`,
		bad + `:32: locality.rule[3].prefix: "u:" is given twice`,
		bad + `:35: locality.rule[4].prefix: prefix "x y" holds a space`,
		bad + `:37: locality.rule[5].prefix: every rule needs a prefix`,
		bad + `:42: locality.rule[6].pin: "z" is neither this region nor a peer's`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("want %q in:\n%s", want, errOut)
		}
	}
	// "0s" is "not given": the default applies.
	if strings.Contains(errOut, "forward_timeout") {
		t.Errorf("forward_timeout = \"0s\" is the default, not an error:\n%s", errOut)
	}
	// min_interval == max_ttl is the least that is safe, and allowed.
	ok := writeFile(t, "ok.toml", "[locality]\nlink_listen = \"127.0.0.1:0\"\nregion = \"a\"\nmin_interval = \"1h\"\nmax_ttl = \"1h\"\ngrace = \"1h\"\n")
	if _, err := Load(ok, nil); err != nil {
		t.Fatal(err)
	}
	// capacity_ceiling is a fraction in (0, 1]; 1 (even written as an
	// integer) is the most.
	for v, want := range map[string]string{"0": "0 is out of range", "1.5": "1.5 is out of range", "-0.1": "-0.1 is out of range", "1": "", "0.01": ""} {
		f := writeFile(t, "ceiling.toml", "[locality]\nlink_listen = \"127.0.0.1:0\"\nregion = \"a\"\ncapacity_ceiling = "+v+"\n")
		s, err := Load(f, nil)
		switch {
		case want == "" && err != nil:
			t.Errorf("capacity_ceiling = %s: %v", v, err)
		case want == "" && fmt.Sprint(s.Locality.CapacityCeiling) != v:
			t.Errorf("capacity_ceiling = %s: resolved to %v", v, s.Locality.CapacityCeiling)
		case want != "" && (err == nil || !strings.Contains(err.Error(), f+":4: locality.capacity_ceiling: "+want)):
			t.Errorf("capacity_ceiling = %s: %v", v, err)
		}
	}
	// evidence: at least 1 (1 itself allowed), at most placement's bound;
	// the section as in force shows the default when unset.
	for v, want := range map[string]string{"": "", "1": "", "3.5": "", "0.9": "0.9 is out of range", "1e6": "1e+06 is out of range"} {
		body := "[locality]\nlink_listen = \"127.0.0.1:0\"\nregion = \"a\"\n"
		if v != "" {
			body += "evidence = " + v + "\n"
		}
		f := writeFile(t, "evidence.toml", body)
		s, err := Load(f, nil)
		switch {
		case want == "" && err != nil:
			t.Errorf("evidence = %s: %v", v, err)
		case want == "" && v == "" && (s.Locality.Policy.Evidence != placement.DefaultEvidence || *s.Effective.Locality.Evidence != placement.DefaultEvidence):
			t.Errorf("evidence unset: resolved to %v, in force %v", s.Locality.Policy.Evidence, *s.Effective.Locality.Evidence)
		case want == "" && v != "" && fmt.Sprint(s.Locality.Policy.Evidence) != v:
			t.Errorf("evidence = %s: resolved to %v", v, s.Locality.Policy.Evidence)
		case want != "" && (err == nil || !strings.Contains(err.Error(), f+":4: locality.evidence: "+want)):
			t.Errorf("evidence = %s: %v", v, err)
		}
	}
	// fence_after: unset is 30s, "0s" turns the fence off, otherwise 1s
	// to 24h.
	for v, want := range map[string]string{"": "30s", `"0s"`: "0s", `"5s"`: "5s", `"500ms"`: "out of range", `"25h"`: "out of range"} {
		body := "[locality]\nlink_listen = \"127.0.0.1:0\"\nregion = \"a\"\n"
		if v != "" {
			body += "fence_after = " + v + "\n"
		}
		f := writeFile(t, "fence.toml", body)
		s, err := Load(f, nil)
		switch {
		case want == "out of range":
			if err == nil || !strings.Contains(err.Error(), f+":4: locality.fence_after: ") || !strings.Contains(err.Error(), want) {
				t.Errorf("fence_after = %s: %v", v, err)
			}
		case err != nil:
			t.Errorf("fence_after = %s: %v", v, err)
		case s.Locality.FenceAfter.String() != want:
			t.Errorf("fence_after = %s: resolved to %v, want %s", v, s.Locality.FenceAfter, want)
		}
	}
	// The placement service must run somewhere.
	alone := writeFile(t, "alone.toml", "[control]\nleader = false\n[locality]\nlink_listen = \"127.0.0.1:0\"\n")
	if _, err := Load(alone, nil); err == nil || !strings.Contains(err.Error(), alone+":2: control.leader: false with [locality] needs control.etcd") {
		t.Fatalf("leader = false without etcd: %v", err)
	}
	// An unknown key inside the section is named with a suggestion.
	typo := writeFile(t, "typo.toml", "[locality]\nlink_listen = \"127.0.0.1:0\"\nmigrate_afer = \"1m\"\n")
	_, err := Load(typo, nil)
	var errs Errors
	if !errors.As(err, &errs) || !strings.Contains(err.Error(), typo+`:3: locality.migrate_afer: unknown key (did you mean "migrate_after"?)`) {
		t.Fatalf("typo: %v", err)
	}
}

// TestLocalityShortMaxTTLKeepsTheDefaultGrace: a section that sets only
// max_ttl, shorter than the default grace, passes the check: the grace
// nobody wrote is fitted to max_ttl, and fill leases follow. A grace
// written above max_ttl is still refused, at its key.
func TestLocalityShortMaxTTLKeepsTheDefaultGrace(t *testing.T) {
	const section = "[server]\nregion = \"a\"\n[locality]\nlink_listen = \"127.0.0.1:0\"\nmax_ttl = \"5s\"\n" +
		"[[locality.peer]]\nregion = \"b\"\nlink = \"127.0.0.1:1\"\n[[locality.rule]]\nprefix = \"u:\"\ntag = true\n"
	f := writeFile(t, "short.toml", section)
	if code, _, errOut := checkConfig(t, f); code != 0 {
		t.Fatalf("config check: exit %d\n%s", code, errOut)
	}
	s, err := Load(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := s.Locality; l.Grace != 5*time.Second || l.Policy.MaxTTL != 5*time.Second || time.Duration(s.Effective.Locality.Grace) != 5*time.Second {
		t.Fatalf("grace %v, max ttl %v, in force %v", l.Grace, l.Policy.MaxTTL, s.Effective.Locality.Grace)
	}
	if got := plane.FillLease(s.Locality.Grace, s.Locality.Policy.MaxTTL); got != 5*time.Second {
		t.Errorf("fill lease %v", got)
	}
	over := writeFile(t, "over.toml", strings.Replace(section, "max_ttl = \"5s\"\n", "max_ttl = \"5s\"\ngrace = \"6s\"\n", 1))
	if _, err := Load(over, nil); err == nil || !strings.Contains(err.Error(), over+":6: locality.grace: 6s is above max_ttl (5s)") {
		t.Fatalf("grace above max_ttl: %v", err)
	}
}

// FuzzLocalityConfig: whatever [locality] section a file holds, checking it
// never panics, and every problem it reports names its file and a key, so
// an operator can find it.
func FuzzLocalityConfig(f *testing.F) {
	// A full section, as in docs/locality.md.
	f.Add(localityConfig)
	// The smallest one.
	f.Add("[locality]\nlink_listen = \"127.0.0.1:0\"\n")
	// A rule with two kinds, a regex with no group, a bad duration pair.
	f.Add("[locality]\nmin_interval = \"1s\"\nmax_ttl = \"1h\"\n[[locality.rule]]\nprefix = \"u\"\ntag = true\nregex = \"u\"\n[[locality.rule]]\nprefix = \"\"\nregex = \"x\"\n")
	// Peers with odd values and types.
	f.Add("[locality]\n[[locality.peer]]\nregion = \"\"\nlink = 5\n[[locality.peer]]\nregion = \"b\"\n")
	// A capacity ceiling out of range, and one of the wrong type.
	f.Add("[locality]\ncapacity_ceiling = 0\n")
	f.Add("[locality]\ncapacity_ceiling = \"90%\"\n")
	// A huge field index and a negative one.
	f.Add("[[locality.rule]]\nprefix = \"a\"\ndelimiter = \"-\"\nfield = 99999999999\n[[locality.rule]]\nprefix = \"b\"\ndelimiter = \"-\"\nfield = -1\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, errs, err := parseConfig("f.toml", []byte(text))
		if err != nil {
			return // not TOML, or a type error: reported by the decoder
		}
		_, rerrs := p.resolve()
		for _, e := range append(errs, rerrs...) {
			if e.File != "f.toml" || e.Msg == "" {
				t.Fatalf("an error without its place or message: %#v", e)
			}
		}
	})
}
