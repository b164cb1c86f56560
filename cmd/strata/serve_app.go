package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/strata-cache/strata/config"
	"github.com/strata-cache/strata/internal/configfile"
	"github.com/strata-cache/strata/internal/stall"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/admin/history"
	"github.com/strata-cache/strata/control/hotmarks"
	"github.com/strata-cache/strata/control/locality/plane"
	"github.com/strata-cache/strata/control/shards"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/hotkeys"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/memcached"
)

// app is the object graph `strata serve` runs: the tiers, their layering,
// the sampler, the proxy in front and the admin server beside it. Tests
// build the same graph with buildServer.
//
// Goroutines: the proxy's event loops, the sampler's drainer, the pools'
// own and the admin server's are owned by those packages; app starts them
// in Start and stops them in Stop. Reload and the admin API change the
// data plane only through values it publishes atomically (the promotion
// policy, the sample rate, a pool's server list), so no client connection
// notices.
type app struct {
	log   *slog.Logger
	level *slog.LevelVar

	l1, l2  *tierHandle // l1 is nil for a single-tier proxy
	clock   *embedded.Clock
	layered *layered.Tier
	hotkeys *hotkeys.Tier // in front of layered: what the proxy serves from
	sampler *sampler.Sampler
	// loops is the handle on the proxy's event loops, made before the
	// tiers that run on them; the proxy is bound to it.
	loops   *proxy.Loops
	proxy   *proxy.Server
	admin   *admin.Server
	control *shards.Plane // nil when no tier is managed
	// locality is [locality] composed; nil without the section. Its
	// router is what the proxy serves from then, in front of hotkeys.
	locality *plane.Plane

	hotmarks *hotmarks.Shared // shared hot-key marks; nil without [control] etcd

	mu sync.Mutex // guards loaded and serialises reloads
	// loaded is the configuration in force: the last file loaded, minus
	// what a reload could not apply live.
	loaded *config.Settings

	live sampler.LiveCache // the sampler's live report for `stats sampler`

	stores stores // the planes' store, opened once

	stopOnce sync.Once
	stopErr  error
}

// newLogger builds the process logger from the [log] settings.
func newLogger(format string, level slog.Level, w io.Writer) (*slog.Logger, *slog.LevelVar) {
	lv := new(slog.LevelVar)
	lv.Set(level)
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), lv
	}
	return slog.New(slog.NewTextHandler(w, opts)), lv
}

// buildServer builds everything s describes without starting it. level,
// when not nil, is the LevelVar behind log, which reloads adjust.
func buildServer(s *config.Settings, log *slog.Logger, level *slog.LevelVar) (*app, error) {
	if level == nil {
		level = new(slog.LevelVar)
		level.Set(s.LogLevel)
	}
	a := &app{log: log, level: level, loaded: s, clock: embedded.NewClock(0)}
	defer a.stores.release() // every plane built holds its own loan
	front, err := a.buildTiers(s)
	if err == nil {
		err = a.buildProxy(s, front)
	}
	if err == nil {
		err = a.buildControlPlane(s)
	}
	if err != nil {
		a.closeTiers()
		return nil, err
	}
	if err := a.buildAdmin(s); err != nil {
		a.stopControl(context.Background())
		a.closeTiers()
		return nil, err
	}
	return a, nil
}

// buildTiers builds the tier stack on the proxy's event loops and returns
// what the proxy serves from. The loop handle comes first: every tier
// that needs the loops takes it in its constructor, and the pools and the
// link client join it there, which is how the proxy learns what to start
// and flush.
func (a *app) buildTiers(s *config.Settings) (tiers.Tier, error) {
	var err error
	if a.loops, err = proxy.NewLoops(s.Proxy.Loops); err != nil {
		return nil, err
	}
	env := tierEnv{log: a.log, now: a.clock.Now, loops: a.loops}
	if a.l1, err = buildTier(s.L1, env); err != nil {
		return nil, err
	}
	if a.l2, err = buildTier(s.L2, env); err != nil {
		return nil, err
	}
	var l1 tiers.Tier
	if a.l1 != nil {
		l1 = a.l1.tier
	}
	// A write the layering delays behind a promotion resumes on its own
	// event loop.
	if a.layered, err = layered.New(s.Layered, l1, a.l2.tier, a.loops); err != nil {
		return nil, fmt.Errorf("promotion: %w", err)
	}
	front, err := a.buildHotKeys(s)
	if err != nil {
		return nil, err
	}
	front, a.locality, err = buildLocality(&a.stores, s, front, a.loops, candidateName("serve"), a.l2.capacity, a.log)
	return front, err
}

// buildProxy builds the sampler and the proxy over front, on the loops
// the tiers were built with.
func (a *app) buildProxy(s *config.Settings, front tiers.Tier) error {
	sc := s.Sampler
	sc.Logger = a.log.With("component", "sampler")
	var err error
	if a.sampler, err = sampler.New(sc); err != nil {
		return err
	}
	pc := s.Proxy
	pc.Logger, pc.Version = a.log, version
	opts := []proxy.Option{
		proxy.WithStats(a.appendStats), proxy.WithCertRefresher(a),
	}
	if a.l2.store != nil {
		// me and lru_crawler see the tier of record's items.
		opts = append(opts, proxy.WithInspector(a.l2.store), proxy.WithMemLimiter(liveMemLimit{a}))
	}
	opts = append(opts, samplerProxyOptions(a.sampler)...)
	if a.locality != nil {
		opts = append(opts, localityProxyOptions(s)...)
	}
	a.proxy, err = proxy.New(pc, front, a.loops, opts...)
	return err
}

// buildControlPlane builds the control plane of the managed tiers, if any.
func (a *app) buildControlPlane(s *config.Settings) error {
	pools := map[string]*poolTier{}
	for _, h := range a.tierHandles() {
		if h.pool != nil {
			pools[h.name] = h.pool
		}
	}
	managed, err := managedTiers(s, pools, a.log)
	if err != nil {
		return err
	}
	a.control, err = buildControl(&a.stores, s.Control, managed, candidateName("serve"), a.log)
	return err
}

// The stall heartbeat is the page history's clock (buildAdmin).
var _ history.Clock = (*stall.Detector)(nil)

// buildAdmin builds the admin server over the app's views.
func (a *app) buildAdmin(s *config.Settings) error {
	ac := s.Admin
	ac.Logger = a.log.With("component", "admin")
	view, sv := adminView{a}, admin.SamplerView{Sampling: a.sampler, Dir: s.Sampler.Dir}
	deps := admin.Deps{
		Promotion: admin.LayeredPromotion{Layering: a.layered}, Sampler: sv, TopKeys: sv,
		Tiers: view, Config: view, Metrics: view, HotKeys: view, Endpoint: a.proxy, TLS: a.proxy.TLSConfig(),
		// The history sample rides the stall heartbeat's wake-ups.
		Clock: stall.Process(),
	}
	if a.control != nil {
		deps.Shards = a.control.View()
	}
	if a.locality != nil {
		deps.Locality = a.locality.Admin()
		// The page's remote fraction per region reads the same counters.
		deps.Regions = a.locality.RegionView(s.Locality.Region)
	}
	var err error
	a.admin, err = admin.New(ac, deps)
	return err
}

// tierHandles are the tiers built: L1 is nil when it is none, and either
// when a build failed before it (closeTiers runs then).
func (a *app) tierHandles() []*tierHandle {
	return slices.DeleteFunc([]*tierHandle{a.l1, a.l2}, func(h *tierHandle) bool { return h == nil })
}

func (a *app) pools() []*poolTier {
	var ps []*poolTier
	for _, h := range a.tierHandles() {
		if h.pool != nil {
			ps = append(ps, h.pool)
		}
	}
	return ps
}

func (a *app) closeTiers() {
	if a.locality != nil {
		_ = a.locality.Close()
	}
	a.stopHotMarks()
	for _, p := range a.pools() {
		p.close()
	}
	for _, h := range a.tierHandles() {
		h.saveSnapshot(a.log)
	}
	a.clock.Stop()
}

// Start serves: the sampler's drainer, then the memcached endpoint, then
// the admin server. On error whatever started is stopped again.
func (a *app) Start() error {
	a.restoreSnapshots()
	return a.startOn(inheritedSockets{})
}

// startOn is Start on the sockets a predecessor handed over, where given.
func (a *app) startOn(in inheritedSockets) error {
	a.sampler.Start()
	if a.hotmarks != nil {
		a.hotmarks.Start()
	}
	if a.l2.pool != nil {
		a.l2.pool.totals = memcached.NewServerTotals(a.l2.pool.p, serverTotalsInterval, time.Second)
		a.l2.pool.totals.Start()
	}
	if a.locality != nil {
		a.locality.Start()
		if !a.locality.AwaitReady(localityReadyWait) {
			a.log.Warn("locality: the location service is not ready (is the store reachable?); serving, μ-shard requests answer as if their owner were unreachable until it is", "waited", localityReadyWait)
		}
	}
	if err := a.proxy.StartOn(in.client, in.plain, in.link); err != nil {
		in.closeAdmin()
		a.stopBackground(context.Background())
		return err
	}
	if err := a.admin.StartOn(in.admin); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// A drain, not a stop: on a handed-over socket it may have taken
		// clients, who then meet a close between requests and retry on the
		// predecessor, which still serves.
		_ = a.proxy.Drain(ctx)
		a.stopBackground(ctx)
		return err
	}
	if a.control != nil {
		a.control.Start()
	}
	s := a.settings()
	a.log.Info("strata serving",
		"listen", a.proxy.Addr(), "admin", a.admin.Addr(), "link", cmp.Or(a.proxy.LinkAddr(), "(none)"),
		"cluster", s.Effective.Server.Cluster, "region", s.Effective.Server.Region,
		"l1", describeTier(s.L1), "l2", describeTier(s.L2),
		"promotion", a.layered.Policy().String(), "l1_max_ttl", a.layered.L1MaxTTL(),
		"sample_rate", a.sampler.Rate(), "config", cmp.Or(s.Path, "(none)"),
		"tls", s.Proxy.TLS.Enabled(), "listen_plain", cmp.Or(a.proxy.PlainAddr(), "(none)"))
	return nil
}

// serverTotalsInterval is how often the L2 pool's servers are asked for
// their item and memory stats.
const serverTotalsInterval = 10 * time.Second

// backgroundStopTimeout bounds flushing the sampler and closing the pools
// and the admin server after the drain, whatever the drain took.
const backgroundStopTimeout = 5 * time.Second

// Stop drains: the proxy stops accepting, lets every request already
// received complete and its reply leave, and closes its connections, all
// within ctx; then, within backgroundStopTimeout, the sampler flushes its
// log, the pools close and the admin server stops (the admin server stays
// up during the drain, so the drain can be watched). It is idempotent. An
// error means something was cut short: requests still in flight when ctx
// ended, or samples not written.
func (a *app) Stop(ctx context.Context) error {
	a.stopOnce.Do(func() {
		start := time.Now()
		var errs []error
		if err := a.proxy.Drain(ctx); err != nil {
			errs = append(errs, fmt.Errorf("drain: %w", err))
		}
		c := a.proxy.Counters()
		a.log.Info("drained", "took", time.Since(start).Round(time.Millisecond), "connections_open", c.ConnsCurrent)
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), backgroundStopTimeout)
		defer cancel()
		if err := a.stopBackground(bg); err != nil {
			errs = append(errs, err)
		}
		a.stopErr = errors.Join(errs...)
	})
	return a.stopErr
}

// stopBackground leaves the fleets, flushes the sampler, closes the pools
// and stops the admin server.
func (a *app) stopBackground(ctx context.Context) error {
	// The fleets are left first: stopping revokes this process's leases,
	// which removes its acknowledgement rows, so the leaders stop waiting
	// on it at once. Not before the drain: until then it still routes
	// requests by the maps it acknowledges.
	var errs []error
	if a.locality != nil {
		if err := a.locality.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("locality: %w", err))
		}
	}
	if err := a.stopControl(ctx); err != nil {
		errs = append(errs, fmt.Errorf("control: %w", err))
	}
	if err := a.sampler.Stop(ctx); err != nil {
		errs = append(errs, fmt.Errorf("sampler: %w", err))
	}
	if a.l2.pool != nil && a.l2.pool.totals != nil {
		a.l2.pool.totals.Stop()
	}
	a.closeTiers()
	if err := a.admin.Stop(ctx); err != nil {
		errs = append(errs, fmt.Errorf("admin: %w", err))
	}
	return errors.Join(errs...)
}

// stopControl stops the control plane, if any, before the pools it drives
// close.
func (a *app) stopControl(ctx context.Context) error {
	if a.control == nil {
		return nil
	}
	return a.control.Stop(ctx)
}

// drainTimeout is [server] drain_timeout as last loaded.
func (a *app) drainTimeout() time.Duration { return a.settings().DrainTimeout }

func (a *app) settings() *config.Settings {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.loaded
}

func describeTier(t config.TierSettings) string {
	switch t.Kind {
	case config.KindEmbedded:
		return "embedded " + configfile.Size(t.Embedded.MaxBytes).String()
	case config.KindMemcached:
		addrs := make([]string, len(t.Servers))
		for i, s := range t.Servers {
			addrs[i] = s.Addr
		}
		return fmt.Sprintf("memcached %v", addrs)
	}
	return t.Kind
}
