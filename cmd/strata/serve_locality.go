package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
)

// localityPlane is [locality] composed. The router wraps the tiers the
// proxy serves from; the link client forwards to the other regions on the
// proxy's loops; the location service is the router's Directory and feeds
// it the location table's changes; the placement service candidate
// campaigns when this process may lead; the view answers the admin API.
// They meet in the store of [control] (etcd, or this process's memory),
// through a client of their own.
//
// In strata control only the candidate and the view exist (no data
// plane): router, links and svc are nil there.
//
// Goroutines: the link client's, the location service's and the
// placement candidate's own, started by start and ended by stop in the
// reverse order of the data flow: the candidate resigns first, then the
// location service stops (its acks and counters with it), then the links
// close, then the store client.
type localityPlane struct {
	st        store.Store
	links     *link.Client
	router    *locality.Tier
	svc       *locsvc.Service
	candidate *placesvc.Runner // nil when this process does not campaign
	view      *placesvc.View

	closeOnce sync.Once
	closeErr  error
}

// The router consumes the link client and the location service; the
// location service feeds the router; the view serves the admin API.
var (
	_ locality.Directory    = (*locsvc.Service)(nil)
	_ locality.Links        = (*link.Client)(nil)
	_ locsvc.Updater        = (*locality.Tier)(nil)
	_ admin.LocalityControl = (*placesvc.View)(nil)
)

// buildLocality wraps inner with the router when s has [locality]; it
// returns inner and nil otherwise. The router and the link client run on
// loops (the link client joins them, so the proxy starts and flushes it).
// member names this process in the store (acks, counters, capacity, the
// election); capacity measures the region's cache memory for the
// placement service (nil: not reported).
func buildLocality(s *settings, inner tiers.Tier, loops *proxy.Loops, member string, capacity func() (used, limit uint64, ok bool), log *slog.Logger) (tiers.Tier, *localityPlane, error) {
	l := s.Locality
	if !l.Enabled {
		return inner, nil, nil
	}
	if len(s.Control.Etcd) == 0 && !s.Control.Leader {
		return nil, nil, errors.New("control.leader = false with [locality] needs control.etcd: with the in-memory store no other process can run the placement service")
	}
	rules, err := keyrule.New(l.Rules)
	if err != nil {
		return nil, nil, fmt.Errorf("locality.rule: %w", err)
	}
	lp, err := newLocalityControl(s, member, s.Control.Leader, log)
	if err != nil {
		return nil, nil, err
	}
	peers := make(map[string]string, len(l.Peers))
	for _, p := range l.Peers {
		peers[p.Region] = p.Link
	}
	lc := link.Config{Peers: peers, Timeout: l.ForwardTimeout, MaxValue: s.Proxy.Limits.MaxItemSize}
	if l.TLS != nil {
		lc.TLS = l.TLS.client
	}
	if lp.links, err = link.New(lc, loops); err != nil {
		lp.close()
		return nil, nil, fmt.Errorf("locality: %w", err)
	}
	lp.svc, err = locsvc.New(locsvc.Config{
		Region: l.Region, Member: member, Prefix: l.StorePrefix,
		ReadTimeout: l.ForwardTimeout, CounterInterval: l.CounterInterval,
		SessionTTL: s.Control.SessionTTL, CacheCapacity: l.Cache.Capacity,
		Capacity: capacity, FenceAfter: l.FenceAfter, Logger: log.With("component", "locality"),
	}, lp.st)
	if err != nil {
		lp.close()
		return nil, nil, fmt.Errorf("locality: %w", err)
	}
	lp.router, err = locality.New(locality.Config{
		Region: l.Region, MaxTTL: l.Policy.MaxTTL, ForwardTimeout: l.ForwardTimeout,
		FillLease: fillLease(l.Grace, l.Policy.MaxTTL), Cache: l.Cache,
	}, locality.Deps{Inner: inner, Rules: rules, Directory: lp.svc, Links: lp.links, Loops: loops})
	if err != nil {
		lp.close()
		return nil, nil, fmt.Errorf("locality: %w", err)
	}
	return lp.router, lp, nil
}

// newLocalityControl opens the store and builds what both strata serve
// and strata control run: the placement candidate (when campaign) and the
// admin view.
func newLocalityControl(s *settings, member string, campaign bool, log *slog.Logger) (*localityPlane, error) {
	l := s.Locality
	lp := &localityPlane{}
	var err error
	if lp.st, err = openStore(s.Control); err != nil {
		return nil, fmt.Errorf("locality: %w", err)
	}
	if campaign {
		// The runner logs its own events.
		lp.candidate, err = placesvc.NewRunner(placesvc.Config{
			Prefix: l.StorePrefix, Policy: l.Policy, Regions: l.Regions(), Grace: l.Grace,
			Seed: uint64(time.Now().UnixNano()), Candidate: member, SessionTTL: s.Control.SessionTTL,
			CapacityCeiling: l.CapacityCeiling, CapacityMaxAge: placesvc.CapacityMaxAgeFor(l.CounterInterval),
			FenceAfter: l.FenceAfter, Logger: log.With("component", "placement"),
		}, lp.st, nil)
		if err != nil {
			lp.close()
			return nil, fmt.Errorf("locality: %w", err)
		}
	}
	lp.view = placesvc.NewView(lp.st, l.StorePrefix, l.Regions(), lp.candidate, nil).
		WithCapacity(l.CapacityCeiling, placesvc.CapacityMaxAgeFor(l.CounterInterval))
	return lp, nil
}

// fillLease is the lease a migration's destination takes on a key while
// it reads the source: the router's default, or less when the grace
// window (which must outlast it) or max_ttl is shorter; whole seconds.
func fillLease(grace, maxTTL time.Duration) time.Duration {
	return max(min(locality.DefaultFillLease, grace, maxTTL).Truncate(time.Second), time.Second)
}

// proxyOptions give the proxy the link listener. The link client needs no
// option: it joined the proxy's loops when built.
func (lp *localityPlane) proxyOptions(s *settings) []proxy.Option {
	opts := []proxy.Option{proxy.WithLink(s.Locality.LinkListen)}
	if t := s.Locality.TLS; t != nil {
		opts = append(opts, proxy.WithLinkTLS(t.server))
	}
	return opts
}

// rulePinTimeout bounds writing the rule pins at start: a store that is
// down then delays the start this long, and the pins wait for a restart.
const rulePinTimeout = 2 * time.Second

// applyRulePins writes every rule's pin (or lifts it) in the store, so the
// placement service follows the file.
func (lp *localityPlane) applyRulePins(pins map[string]string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), rulePinTimeout)
	defer cancel()
	for prefix, region := range pins {
		if err := lp.view.PinRule(ctx, prefix, region); err != nil {
			log.Warn("locality: rule pin not applied", "prefix", prefix, "region", region, "err", err)
		}
	}
}

// start runs the location service, feeding the router, and the placement
// candidate. The router resumes requests on the loops it was built with.
func (lp *localityPlane) start() {
	if lp.svc != nil {
		lp.svc.Start(lp.router)
	}
	if lp.candidate != nil {
		lp.candidate.Start()
	}
}

// localityReadyWait bounds how long strata serve waits at start for the
// location service to be ready (its first read of the table and its ack
// row written) before it takes clients: until then a μ-shard request
// would answer as if its owner were unreachable. A store that is down at
// start does not keep the proxy from serving the keys no rule claims.
const localityReadyWait = 5 * time.Second

// awaitReady waits until the location service is ready or
// localityReadyWait passed, and says which.
func (lp *localityPlane) awaitReady() bool {
	if lp.svc == nil {
		return true
	}
	deadline := time.NewTimer(localityReadyWait)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !lp.svc.Ready() {
		select {
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// stop ends what start started, then closes the links and the store
// client, within ctx.
func (lp *localityPlane) stop(ctx context.Context) error {
	var errs []error
	if lp.candidate != nil {
		errs = append(errs, lp.candidate.Stop(ctx))
	}
	if lp.svc != nil {
		errs = append(errs, lp.svc.Stop(ctx))
	}
	errs = append(errs, lp.close())
	return errors.Join(errs...)
}

// close releases what build made. Idempotent: a failed start and the
// shutdown both end here.
func (lp *localityPlane) close() error {
	lp.closeOnce.Do(func() {
		var errs []error
		if lp.links != nil {
			errs = append(errs, lp.links.Close())
		}
		if lp.st != nil {
			errs = append(errs, lp.st.Close())
		}
		lp.closeErr = errors.Join(errs...)
	})
	return lp.closeErr
}

// metrics adds the router's, the links' and the services' counters to s.
func (lp *localityPlane) metrics(s *admin.Snapshot) {
	if lp.router != nil {
		rs := lp.router.Stats()
		s.LocalityRequests = []admin.LabeledCount{
			{Label: "local", Count: rs.Local}, {Label: "forwarded", Count: rs.Forwarded},
			{Label: "wrong_owner", Count: rs.WrongOwner}, {Label: "owner_unreachable", Count: rs.OwnerUnreachable},
		}
		s.LocalityCacheHits, s.LocalityCacheMisses = rs.CacheHits, rs.CacheMisses
		s.LocalityForwardedBytes = rs.ForwardedBytes
		s.LocalityCounterBytes = lp.svc.Stats().CounterBytes
		s.LocalityLinkRequests = lp.links.Stats().Requests
	}
	if lp.candidate != nil {
		ps := lp.candidate.Stats()
		s.LocalityMigrations, s.LocalityMigrationsInFlight = ps.Settled, int64(ps.InFlight)
	}
}

// linkTLS is the region links' mutual TLS, loaded from [locality]
// link_cert, link_key and link_ca: the same certificate serves the link
// listener and authenticates this strata to its peers.
type linkTLS struct {
	server, client *tls.Config
}

// localityAdminTimeout bounds an admin call on the locality state: each
// is a few store round trips, and with the store down an operator gets
// 503 instead of a call that hangs.
const localityAdminTimeout = 5 * time.Second

// boundedLocality is the view as the admin API uses it, every call
// bounded by localityAdminTimeout.
type boundedLocality struct{ v admin.LocalityControl }

var _ admin.LocalityControl = boundedLocality{}

func (b boundedLocality) MuShard(ctx context.Context, id string) (admin.MuShard, error) {
	ctx, cancel := context.WithTimeout(ctx, localityAdminTimeout)
	defer cancel()
	return b.v.MuShard(ctx, id)
}

func (b boundedLocality) Migrate(ctx context.Context, id, to string) (admin.MuShard, error) {
	ctx, cancel := context.WithTimeout(ctx, localityAdminTimeout)
	defer cancel()
	return b.v.Migrate(ctx, id, to)
}

func (b boundedLocality) Pin(ctx context.Context, id, region string) (admin.MuShard, error) {
	ctx, cancel := context.WithTimeout(ctx, localityAdminTimeout)
	defer cancel()
	return b.v.Pin(ctx, id, region)
}

func (b boundedLocality) Migrations(ctx context.Context) ([]admin.Migration, error) {
	ctx, cancel := context.WithTimeout(ctx, localityAdminTimeout)
	defer cancel()
	return b.v.Migrations(ctx)
}
