package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// A fleet is regions a, b, c on this machine, as an operator runs them:
// one real etcd, and per region a real memcached as L2 and a `strata
// serve` process with [locality] whose link and client ports are fixed
// for its life (picked free), so a region killed and restarted comes back
// where its peers and clients expect it.

// fleetOptions shape a fleet's file; zero fields take the values below.
type fleetOptions struct {
	migrateAfter, minInterval, maxTTL, grace string
	// fenceAfter: how long a strata cut off etcd serves its region's
	// μ-shards on its view; default 3s.
	fenceAfter string
	// viaProxy lists the regions whose strata reach etcd through an
	// etcdtest.Proxy, so a test can cut one region off the control plane.
	viaProxy map[string]bool
	// forwardTimeout by region; default 1s.
	forwardTimeout map[string]string
	// tls puts mutual TLS on the region links, each region with a
	// certificate of its own from one CA.
	tls bool
}

type fleetRegion struct {
	name   string
	mc     *memcachedtest.Server
	listen string // memcached clients' address
	link   string // region link
	cfg    string // its configuration file
	etcd   *etcdtest.Proxy
	p      *process
	client *memcache.Client
}

type fleet struct {
	t       *testing.T
	bin     string
	etcd    *etcdtest.Server
	regions []*fleetRegion
	st      *etcdstore.Store // the test's own etcd client, for the election
}

// fleetRegionNames are the regions of every fleet.
var fleetRegionNames = []string{"a", "b", "c"}

func startFleet(t *testing.T, o fleetOptions) *fleet {
	t.Helper()
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&o.migrateAfter, "1s")
	def(&o.maxTTL, "4s")
	// memcached's clock ticks once a second, so a value may outlive its
	// TTL by up to a second; the margin keeps a μ-shard's return to a
	// region after every value it left there has expired.
	def(&o.minInterval, "6s")
	def(&o.grace, "2s")
	def(&o.fenceAfter, "3s")
	f := &fleet{t: t, bin: testbin.BuildStrata(t), etcd: etcdtest.Start(t)}
	for _, name := range fleetRegionNames {
		r := &fleetRegion{name: name, mc: memcachedtest.Start(t, "-m", "32"),
			listen: "127.0.0.1:" + strconv.Itoa(testbin.FreePort(t)),
			link:   "127.0.0.1:" + strconv.Itoa(testbin.FreePort(t))}
		if o.viaProxy[name] {
			r.etcd = etcdtest.NewProxy(t, f.etcd.Endpoint)
		}
		f.regions = append(f.regions, r)
	}
	var pki *linkPKI
	for _, r := range f.regions {
		endpoint := f.etcd.Endpoint
		if r.etcd != nil {
			endpoint = r.etcd.Addr
		}
		var peers strings.Builder
		for _, p := range f.regions {
			if p != r {
				fmt.Fprintf(&peers, "[[locality.peer]]\nregion = %q\nlink = %q\n", p.name, p.link)
			}
		}
		ft := o.forwardTimeout[r.name]
		def(&ft, "1s")
		tlsKeys := ""
		if o.tls {
			if pki == nil {
				pki = newLinkPKI(t)
			}
			cert, key := pki.issue(t, r.name)
			tlsKeys = fmt.Sprintf("link_cert = %q\nlink_key = %q\nlink_ca = %q\n", cert, key, pki.ca)
		}
		r.cfg = writeFile(t, "strata-"+r.name+".toml", fmt.Sprintf(`[server]
region = %q
[l1]
kind = "none"
[l2]
servers = [%q]
timeout = "1s"
[control]
etcd = [%q]
session_ttl = "2s"
[locality]
link_listen = %q
migrate_after = %q
min_interval = %q
max_ttl = %q
grace = %q
forward_timeout = %q
fence_after = %q
counter_interval = "200ms"
half_life = "30s"
%s%s[[locality.rule]]
prefix = "u:"
tag = true
[[locality.rule]]
prefix = "p:"
tag = true
pin = "c"
`, r.name, r.mc.Addr, endpoint, r.link, o.migrateAfter, o.minInterval, o.maxTTL, o.grace, ft, o.fenceAfter, tlsKeys, peers.String()))
	}
	for _, r := range f.regions {
		f.start(r)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, r := range f.regions {
				if r.p != nil {
					t.Logf("strata %s:\n%s", r.name, tail(r.p.stderr.String(), 6000))
				}
			}
		}
	})
	return f
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// start runs (or runs again) region r's strata on its fixed ports.
func (f *fleet) start(r *fleetRegion) {
	f.t.Helper()
	r.p = startServe(f.t, exec.Command(f.bin, "serve", "--config", r.cfg, "--listen", r.listen, "--admin", "127.0.0.1:0"))
	r.client = memcache.New(r.listen)
	r.client.Timeout = 5 * time.Second
}

func (f *fleet) region(name string) *fleetRegion {
	for _, r := range f.regions {
		if r.name == name {
			return r
		}
	}
	f.t.Fatalf("no region %q", name)
	return nil
}

// locMetrics reads a region's /metrics: every series by name and sorted
// labels, e.g. `strata_locality_requests_total{result="local"}`.
func (f *fleet) locMetrics(t *testing.T, r *fleetRegion) map[string]float64 {
	t.Helper()
	code, body := httpDo(t, "GET", "http://"+r.p.admin+"/metrics", "", "")
	if code != 200 {
		t.Fatalf("%s /metrics: %d", r.name, code)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s /metrics does not parse: %v", r.name, err)
	}
	out := map[string]float64{}
	for name, fam := range fams {
		for _, m := range fam.Metric {
			var labels []string
			for _, lp := range m.Label {
				labels = append(labels, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			}
		}
	}
	return out
}

// requests is strata_locality_requests_total{result} of r.
func (f *fleet) requests(t *testing.T, r *fleetRegion, result string) float64 {
	t.Helper()
	return f.locMetrics(t, r)[`strata_locality_requests_total{result="`+result+`"}`]
}

// muShard is GET /admin/v1/locality/mushards/{id}.
type muShard struct {
	ID       string             `json:"id"`
	Owner    string             `json:"owner"`
	Epoch    uint64             `json:"epoch"`
	State    string             `json:"state"`
	Counters map[string]float64 `json:"counters"`
	History  []json.RawMessage  `json:"history"`
}

func muShardPath(name string) string {
	return "/admin/v1/locality/mushards/" + url.PathEscape(name)
}

// muShard reads μ-shard name through r's admin API; ok is false on a
// non-200 answer (unknown μ-shard, store down).
func (f *fleet) muShard(t *testing.T, r *fleetRegion, name string) (muShard, bool) {
	t.Helper()
	code, body := httpDo(t, "GET", "http://"+r.p.admin+muShardPath(name), "", "")
	if code != 200 {
		return muShard{}, false
	}
	var m muShard
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%s %s: %v: %s", r.name, name, err, body)
	}
	return m, true
}

// pin pins μ-shard name to region (empty unpins).
func (f *fleet) pin(t *testing.T, r *fleetRegion, name, region string) {
	t.Helper()
	if code, body := httpDo(t, "PUT", "http://"+r.p.admin+muShardPath(name)+"/pin", "", fmt.Sprintf(`{"region":%q}`, region)); code/100 != 2 {
		t.Fatalf("pin %s to %q: %d %s", name, region, code, body)
	}
}

// settledAt waits until μ-shard name is Stable at owner, as read through
// every region's admin API.
func (f *fleet) settledAt(t *testing.T, name, owner string, within time.Duration) muShard {
	t.Helper()
	var m muShard
	poll.Until(t, within, name+" stable in "+owner, func() bool {
		var ok bool
		m, ok = f.muShard(t, f.regions[0], name)
		return ok && m.Owner == owner && m.State == "stable"
	})
	return m
}

// mustSet writes through region r's strata and fails on anything but
// STORED.
func (r *fleetRegion) mustSet(t *testing.T, key, value string) {
	t.Helper()
	if err := r.client.Set(&memcache.Item{Key: key, Value: []byte(value)}); err != nil {
		t.Fatalf("set %s through %s: %v", key, r.name, err)
	}
}

// mustGet reads through region r's strata and fails on an error or a
// value other than want ("" wants a miss).
func (r *fleetRegion) mustGet(t *testing.T, key, want string) {
	t.Helper()
	it, err := r.client.Get(key)
	switch {
	case want == "" && err == memcache.ErrCacheMiss:
	case err != nil:
		t.Fatalf("get %s through %s: %v (want %q)", key, r.name, err, want)
	case string(it.Value) != want:
		t.Fatalf("get %s through %s: %q, want %q", key, r.name, it.Value, want)
	}
}

// placementLeaderOrNil is the region whose strata holds the placement
// service's election now (read from etcd: the election row's value is the
// candidate's name, which ends in its pid), or nil.
func (f *fleet) placementLeaderOrNil() *fleetRegion {
	f.t.Helper()
	if f.st == nil {
		st, err := etcdstore.New(etcdstore.Config{Endpoints: []string{f.etcd.Endpoint}})
		if err != nil {
			f.t.Fatal(err)
		}
		f.t.Cleanup(func() { _ = st.Close() })
		f.st = st
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	row, ok, err := store.Leader(ctx, f.st, locsvc.ElectionName)
	if err != nil || !ok {
		return nil
	}
	for _, r := range f.regions {
		if r.p != nil && strings.HasSuffix(string(row.Value), "-"+strconv.Itoa(r.p.cmd.Process.Pid)) {
			select {
			case <-r.p.exited:
				return nil // its lease has not run out yet
			default:
				return r
			}
		}
	}
	return nil
}

// placementLeader waits for a placement leader.
func (f *fleet) placementLeader(within time.Duration) *fleetRegion {
	f.t.Helper()
	var r *fleetRegion
	poll.Until(f.t, within, "a placement leader", func() bool {
		r = f.placementLeaderOrNil()
		return r != nil
	})
	return r
}
