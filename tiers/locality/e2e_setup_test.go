package locality_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/tlstest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/locality/loccache"
	"github.com/strata-cache/strata/tiers/memcached"
)

// The end-to-end tests run two or three regions in this process: each a
// proxy.Server with a memcached pool over its own real memcached as L2, a
// region-link listener and a link client to the others, all sharing one
// location table in a Memory control store. The directory (dir) is the
// test's stand-in for the location service, over the real table; the
// test moves μ-shards through Prepare, Migrating and Stable by hand and
// pushes each row change to every region's router with Update, waiting
// for done, as the service does before acknowledging.

// dir implements locality.Directory for one region over the shared table.
type dir struct {
	w      *world
	region string

	mu sync.Mutex
	// stale, when set for a name, is answered to non-fresh lookups
	// instead of the table's row: a location cache elsewhere that lags.
	stale map[string]loccache.Location
	// block, when set for a name, holds its lookups until closed: a
	// location service that is slow to answer.
	block    map[string]chan struct{}
	accesses map[string][2]int // name → [local, remote]
	resolves int
	fresh    int
	// fenced is what Fenced answers: the region's strata lost its store.
	fenced atomic.Bool
}

var _ locality.Directory = (*dir)(nil)

func (d *dir) Fenced(time.Time) bool { return d.fenced.Load() }

func (d *dir) Resolve(name string, fresh bool, done func(loccache.Location, error)) {
	d.mu.Lock()
	d.resolves++
	if fresh {
		d.fresh++
	}
	st, isStale := d.stale[name]
	block := d.block[name]
	d.mu.Unlock()
	go func() {
		if block != nil {
			<-block
		}
		if isStale && !fresh {
			done(st, nil)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		e, ok, err := d.w.table.Get(ctx, name)
		if err == nil && !ok {
			e, _, err = d.w.table.Create(ctx, d.w.lead, name, d.region, time.Now())
		}
		done(locationOf(e), err)
	}()
}

func (d *dir) Access(name string, remote bool) {
	d.mu.Lock()
	a := d.accesses[name]
	if remote {
		a[1]++
	} else {
		a[0]++
	}
	d.accesses[name] = a
	d.mu.Unlock()
}

// Served: the e2e tests check the counts of the clients' own requests.
func (d *dir) Served(string) {}

func (d *dir) counts(name string) [2]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.accesses[name]
}

func (d *dir) setStale(name string, loc loccache.Location) {
	d.mu.Lock()
	d.stale[name] = loc
	d.mu.Unlock()
}

func locationOf(e loctable.Entry) loccache.Location {
	return loccache.Location{Owner: e.Owner, Epoch: e.Epoch, State: e.State, Source: e.Source}
}

// region is one strata.
type region struct {
	name    string
	mc      *memcachedtest.Server
	pool    *memcached.Pool
	links   *link.Client
	tier    *locality.Tier
	srv     *proxy.Server
	dir     *dir
	stopMu  sync.Mutex
	stopped bool
}

func (r *region) stop(t *testing.T) {
	r.stopMu.Lock()
	defer r.stopMu.Unlock()
	if r.stopped {
		return
	}
	r.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.srv.Stop(ctx); err != nil {
		t.Errorf("stop %s: %v", r.name, err)
	}
	_ = r.links.Close()
	_ = r.pool.Close()
}

// world is the regions and the shared location table.
type world struct {
	mem     *store.Memory
	table   *loctable.Table
	lead    store.Leadership
	rules   *keyrule.Rules
	regions map[string]*region
	order   []string
}

type worldOpts struct {
	regions []string
	maxTTL  time.Duration
	timeout time.Duration // forward_timeout and the link timeout
	// forward, when set, is the routers' forward_timeout instead.
	forward time.Duration
	loops   int         // event loops per proxy, default 2
	tls     *tlstest.CA // mutual TLS on the links, with certificates of this CA
}

func newWorld(t *testing.T, o worldOpts) *world {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := &world{mem: store.NewMemory(store.MemoryOptions{}), regions: map[string]*region{}, order: o.regions}
	c := w.mem.Connect()
	w.table = loctable.New(c, "")
	sess, err := c.NewSession(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	if w.lead, err = c.Campaign(ctx, sess, "locality-placement", "test"); err != nil {
		t.Fatal(err)
	}
	if w.rules, err = keyrule.New(keyrule.Config{Rules: []keyrule.Rule{{Prefix: "u:", Tag: true}}}); err != nil {
		t.Fatal(err)
	}
	// Each region's link listener is bound here, before anything else
	// picks a port: a port only reserved by number could be taken by the
	// memcached started below, or by another test process, before the
	// proxy bound it. The proxy is started on the listener (StartOn).
	linkAddrs, linkLns := map[string]string{}, map[string]net.Listener{}
	for _, name := range o.regions {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		linkAddrs[name], linkLns[name] = ln.Addr().String(), ln
	}
	t.Cleanup(func() { // those a failed setup never handed over
		for _, ln := range linkLns {
			_ = ln.Close()
		}
	})
	for _, name := range o.regions {
		r := &region{name: name, mc: memcachedtest.Start(t)}
		r.dir = &dir{w: w, region: name, stale: map[string]loccache.Location{}, block: map[string]chan struct{}{},
			accesses: map[string][2]int{}}
		nloops, forward := o.loops, o.forward
		if nloops == 0 {
			nloops = 2
		}
		if forward == 0 {
			forward = o.timeout
		}
		pcfg := proxy.Config{Listen: "127.0.0.1:0", Loops: nloops}
		loops := proxytest.Loops(t, pcfg)
		if r.pool, err = memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: r.mc.Addr}}}, loops); err != nil {
			t.Fatal(err)
		}
		peers := map[string]string{}
		for other, addr := range linkAddrs {
			if other != name {
				peers[other] = addr
			}
		}
		lcfg := link.Config{Peers: peers, Timeout: o.timeout}
		popts := []proxy.Option{proxy.WithLink(linkAddrs[name])}
		if o.tls != nil {
			server, client := o.tls.Mutual(t)
			lcfg.TLS = client
			popts = append(popts, proxy.WithLinkTLS(server))
		}
		if r.links, err = link.New(lcfg, loops); err != nil {
			t.Fatal(err)
		}
		r.tier, err = locality.New(locality.Config{Region: name, MaxTTL: o.maxTTL, ForwardTimeout: forward},
			locality.Deps{Inner: r.pool, Rules: w.rules, Directory: r.dir, Links: r.links, Loops: loops})
		if err != nil {
			t.Fatal(err)
		}
		r.srv, err = proxy.New(pcfg, r.tier, loops, popts...)
		if err != nil {
			t.Fatal(err)
		}
		lln := linkLns[name]
		delete(linkLns, name) // the server owns it now
		if err := r.srv.StartOn(nil, nil, lln); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.stop(t) })
		w.regions[name] = r
	}
	return w
}

// publish pushes the table's current row of name to every live region's
// router and waits until each applied it on every loop.
func (w *world) publish(t *testing.T, name string) loccache.Location {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, ok, err := w.table.Get(ctx, name)
	if err != nil || !ok {
		t.Fatalf("row %s: %v %v", name, ok, err)
	}
	loc := locationOf(e)
	for _, rn := range w.order {
		r := w.regions[rn]
		if r.stopped {
			continue
		}
		done := make(chan struct{})
		r.tier.Update([]locality.Change{{Name: name, Loc: loc}}, func() { close(done) })
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("%s did not apply %s", rn, name)
		}
	}
	return loc
}

// move runs one migration of name to region to, step by step, publishing
// every step; between steps it calls between (may be nil) with the
// state just published.
func (w *world) move(t *testing.T, name, to string, between func(loccache.Location)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, ok, err := w.table.Get(ctx, name)
	if err != nil || !ok {
		t.Fatalf("row %s: %v %v", name, ok, err)
	}
	if _, _, err := w.table.Migrate(ctx, w.lead, name, e.Epoch, to, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	step := func() {
		loc := w.publish(t, name)
		if between != nil {
			between(loc)
		}
	}
	step()
	if _, _, err := w.table.Promote(ctx, w.lead, name, e.Epoch+1); err != nil {
		t.Fatal(err)
	}
	step()
	if _, _, err := w.table.Settle(ctx, w.lead, name, e.Epoch+1); err != nil {
		t.Fatal(err)
	}
	step()
}

// create makes name's row owned by owner.
func (w *world) create(t *testing.T, name, owner string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, created, err := w.table.Create(ctx, w.lead, name, owner, time.Now()); err != nil || !created {
		t.Fatalf("create %s: %v %v", name, created, err)
	}
}

// client dials a region's strata. Exchanges with a cluster of regions may
// wait on links and moves: 20 s each.
func (w *world) client(t *testing.T, region string) *mctext.Conn {
	t.Helper()
	return dialClient(t, w.regions[region].srv.Addr())
}

func dialClient(t *testing.T, addr string) *mctext.Conn {
	t.Helper()
	return mctext.DialTimeout(t, addr, 20*time.Second)
}

// mustGet fails unless key reads as want through c.
func mustGet(t *testing.T, c *mctext.Conn, key, want string) {
	t.Helper()
	v, ok, errLine := c.TryGet(key)
	if errLine != "" || !ok || v != want {
		t.Fatalf("get %s: %q %v %q, want %q", key, v, ok, errLine, want)
	}
}

// memGet reads key straight from a region's memcached: "" and false if
// absent, and its TTL.
func memGet(t *testing.T, r *region, key string) (string, bool, int) {
	t.Helper()
	c := dialClient(t, r.mc.Addr)
	l := c.Line("mg " + key + " v t\r\n")
	if l == "EN" {
		return "", false, 0
	}
	var n, ttl int
	if _, err := fmt.Sscanf(l, "VA %d t%d", &n, &ttl); err != nil {
		t.Fatalf("mg %s at %s: %q", key, r.name, l)
	}
	return c.ReadBlock(n), true, ttl
}
