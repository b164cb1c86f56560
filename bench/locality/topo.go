package locality

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/bench/proc"
)

// region is one region's running processes and addresses.
type region struct {
	name      string
	client    string // strata's memcached endpoint, where this region's clients go
	admin     string // strata's admin HTTP endpoint (/metrics, /admin/v1)
	linkAddr  string // strata's region-link listener (locality placements)
	memcached string // the region's L2
	strata    *proc.Process
	l2        *proc.Process
}

// topology is one placement's processes: an etcd (locality placements),
// per region a memcached and a strata, and the WAN between the regions.
// It owns them all; stop ends every one, whatever state it is in.
type topology struct {
	placement string
	regions   []*region
	etcd      *proc.Process
	etcdAddr  string // client endpoint, host:port
	wan       *wan
	// toRegion[i][j] is the proxy from region i to region j (nil on the
	// diagonal): a link listener (locality) or strata's client port (full
	// replication, for the clients' cross-region deletes).
	toRegion [][]*link
	started  []*proc.Process
	dir      string
}

func (t *topology) stop() {
	if t.wan != nil {
		t.wan.Close()
	}
	for i := len(t.started) - 1; i >= 0; i-- {
		t.started[i].Stop()
	}
}

// explain adds the output of every process that has exited to err.
func (t *topology) explain(err error) error {
	var b strings.Builder
	for _, p := range t.started {
		select {
		case <-p.Exited():
			fmt.Fprintf(&b, "\n--- %v ---\n%s", p.DescribeExit(), tail(p.Output(), 3000))
		default:
		}
	}
	if b.Len() == 0 {
		return err
	}
	return fmt.Errorf("%w%s", err, b.String())
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

const readyWithin = 20 * time.Second

// setUp starts the topology of placement. Ports are picked free just
// before use; a process that loses its port to someone else fails setUp
// (the error says "address already in use"), and the caller may try again.
func setUp(ctx context.Context, cfg *Config, placement, dir string) (_ *topology, err error) {
	t := &topology{placement: placement, wan: newWAN(), dir: dir}
	defer func() {
		if err != nil {
			err = t.explain(err)
			t.stop()
		}
	}()
	n := len(cfg.regionNames())
	locality := placement != Full
	var etcdAddr string
	if locality {
		if etcdAddr, err = t.startEtcd(ctx, cfg); err != nil {
			return nil, err
		}
	}
	// strata's ports stay bound here until the strata start, so that the
	// proxies below, listening on any free port, cannot be given one.
	var held reservations
	defer held.release()
	for _, name := range cfg.regionNames() {
		r := &region{name: name}
		if r.l2, r.memcached, err = t.startMemcached(ctx, cfg, name); err != nil {
			return nil, err
		}
		if r.client, err = held.reserve(); err != nil {
			return nil, err
		}
		if r.admin, err = held.reserve(); err != nil {
			return nil, err
		}
		if locality {
			if r.linkAddr, err = held.reserve(); err != nil {
				return nil, err
			}
		}
		t.regions = append(t.regions, r)
	}
	// The WAN first: each region's configuration names its peers by the
	// proxies in front of their links.
	t.toRegion = make([][]*link, n)
	for i := range n {
		t.toRegion[i] = make([]*link, n)
		for j := range n {
			if i == j {
				continue
			}
			up := t.regions[j].client
			if locality {
				up = t.regions[j].linkAddr
			}
			name := t.regions[i].name + "->" + t.regions[j].name
			if t.toRegion[i][j], err = t.wan.add(name, i, j, "127.0.0.1:0", up, cfg.oneWay(i, j)); err != nil {
				return nil, err
			}
		}
	}
	held.release()
	for i, r := range t.regions {
		file := filepath.Join(dir, "strata-"+r.name+".toml")
		if err := os.WriteFile(file, []byte(t.strataConfig(cfg, i, etcdAddr)), 0o600); err != nil {
			return nil, err
		}
		p, err := proc.Start("strata "+r.name+" ("+placement+")", cfg.Binaries.Strata, "serve", "--config", file)
		if err != nil {
			return nil, err
		}
		t.started = append(t.started, p)
		r.strata = p
	}
	for _, r := range t.regions {
		client := r.client
		if err := proc.WaitReady(ctx, r.strata, readyWithin, func() error { return proc.Probe(client) }); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// reservations hold loopback ports until release. Another process may
// still take one between release and its use; setUp's caller retries
// then.
type reservations []net.Listener

func (rs *reservations) reserve() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	*rs = append(*rs, l)
	return l.Addr().String(), nil
}

// release closes every reservation. Idempotent.
func (rs *reservations) release() {
	for _, l := range *rs {
		_ = l.Close()
	}
	*rs = nil
}

func loopback(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// strataConfig is region i's configuration file. Every placement runs the
// same strata with one L2 memcached and no L1, so the L2's bytes are all
// the region caches. The locality placements add [locality] and [control];
// static and strata differ only in how μ-shards are placed (see Run).
func (t *topology) strataConfig(cfg *Config, i int, etcdAddr string) string {
	r := t.regions[i]
	var b strings.Builder
	fmt.Fprintf(&b, "[server]\nlisten = %q\nregion = %q\ncluster = %q\nloops = 1\n\n", r.client, r.name, r.name)
	// A shared 2-core machine stalls for longer than the pool's 250ms
	// default now and then; the L2 is on loopback, so a longer timeout
	// costs nothing when all is well.
	fmt.Fprintf(&b, "[l1]\nkind = \"none\"\n\n[l2]\nservers = [%q]\ntimeout = \"1s\"\n\n", r.memcached)
	fmt.Fprintf(&b, "[admin]\nlisten = %q\n\n[log]\nlevel = \"warn\"\n\n", r.admin)
	if t.placement == Full {
		return b.String()
	}
	p := cfg.policy()
	fmt.Fprintf(&b, "[control]\netcd = [%q]\n\n", etcdAddr)
	fmt.Fprintf(&b, "[locality]\nregion = %q\nlink_listen = %q\n", r.name, r.linkAddr)
	fmt.Fprintf(&b, "migrate_after = %q\nmin_interval = %q\nmax_ttl = %q\n", p.MigrateAfter, p.MinInterval, p.MaxTTL)
	// fence_after: a new placement leader takes no step of a move for
	// that long (a strata it never saw may still serve on an old view);
	// on one machine nothing is partitioned, so a short one keeps the
	// simulated day's first moves on time.
	fmt.Fprintf(&b, "half_life = %q\ncounter_interval = %q\ngrace = %q\nrate = %d\nburst = %d\nforward_timeout = \"1s\"\nfence_after = \"2s\"\n\n",
		p.HalfLife, p.CounterInterval, p.Grace, p.Rate, p.Burst)
	for j, peer := range t.regions {
		if j != i {
			fmt.Fprintf(&b, "[[locality.peer]]\nregion = %q\nlink = %q\n\n", peer.name, t.toRegion[i][j].Addr())
		}
	}
	b.WriteString("[[locality.rule]]\nprefix = \"u:\"\ntag = true\n")
	return b.String()
}

func (t *topology) startMemcached(ctx context.Context, cfg *Config, name string) (*proc.Process, string, error) {
	var last error
	for range 3 {
		port, err := proc.FreePort()
		if err != nil {
			return nil, "", err
		}
		args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-t", "1", "-m", strconv.Itoa(cfg.MemcachedMB)}
		if os.Geteuid() == 0 {
			args = append(args, "-u", "nobody") // memcached refuses to run as root otherwise
		}
		p, err := proc.Start("memcached "+name, cfg.Binaries.Memcached, args...)
		if err != nil {
			return nil, "", err
		}
		t.started = append(t.started, p)
		addr := loopback(port)
		if last = proc.WaitReady(ctx, p, readyWithin, func() error { return proc.Probe(addr) }); last == nil {
			return p, addr, nil
		}
		p.Stop()
	}
	return nil, "", last
}

func (t *topology) startEtcd(ctx context.Context, cfg *Config) (string, error) {
	var last error
	for range 3 {
		client, err := proc.FreePort()
		if err != nil {
			return "", err
		}
		peer, err := proc.FreePort()
		if err != nil {
			return "", err
		}
		cu, pu := "http://"+loopback(client), "http://"+loopback(peer)
		data, err := os.MkdirTemp(t.dir, "etcd-")
		if err != nil {
			return "", err
		}
		p, err := proc.Start("etcd", cfg.Binaries.Etcd,
			"--name", "bench", "--data-dir", data,
			"--listen-client-urls", cu, "--advertise-client-urls", cu,
			"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
			"--initial-cluster", "bench="+pu, "--initial-cluster-state", "new",
			"--heartbeat-interval", "50", "--election-timeout", "500",
			"--log-level", "warn")
		if err != nil {
			return "", err
		}
		t.started = append(t.started, p)
		if last = proc.WaitReady(ctx, p, readyWithin, func() error { return etcdHealthy(cu) }); last == nil {
			t.etcd, t.etcdAddr = p, loopback(client)
			return loopback(client), nil
		}
		p.Stop()
	}
	return "", last
}

func etcdHealthy(url string) error {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get(url + "/health")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd health: %s", resp.Status)
	}
	return nil
}
