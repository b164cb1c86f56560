package plane

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/keyrule"
	"github.com/strata-cache/strata/tiers/locality/link"
	"github.com/strata-cache/strata/tiers/memcached"
)

// Config is the locality tier's settings, one Config per package it
// composes; their owners validate them.
type Config struct {
	// Campaign runs the placement candidate in this process.
	Campaign bool
	// Placement configures the candidate (when Campaign) and the admin
	// view (Prefix, Regions, CapacityCeiling, CapacityMaxAge).
	Placement placesvc.Config
	// Location, Link, Router and Rules configure the data plane; they are
	// ignored without Deps.Inner. Location.HalfLife is the placement
	// policy's (zero takes it; another value is refused): see
	// locationConfig.
	Location locsvc.Config
	Link     link.Config
	Router   locality.Config
	Rules    keyrule.Config
	// Pins maps a rule's prefix to the region it is pinned to ("" lifts
	// the pin); Start writes them so the placement service follows them.
	Pins map[string]string
	// Logger takes what the Plane itself reports (a pin not applied).
	Logger *slog.Logger
}

// Loops is the proxy's loop handle as the router and the link client use
// it.
type Loops interface {
	memcached.Loops
	locality.Executor
}

// Deps are what the Plane is built over.
type Deps struct {
	// Store is this Plane's own store client; the Plane closes it.
	Store store.Store
	// Inner is the local tiers the router wraps; nil builds no data plane
	// (no router, links nor location service).
	Inner tiers.Tier
	// Loops is the proxy's loop handle; required with Inner.
	Loops Loops
}

// The router consumes the link client and the location service; the
// location service feeds the router; the view serves the admin API.
var (
	_ locality.Directory    = (*locsvc.Service)(nil)
	_ locality.Links        = (*link.Client)(nil)
	_ locsvc.Updater        = (*locality.Tier)(nil)
	_ admin.LocalityControl = (*placesvc.View)(nil)
)

// Plane is the locality tier composed; see the package doc for its
// lifecycle.
type Plane struct {
	log       *slog.Logger
	pins      map[string]string
	st        store.Store
	links     *link.Client    // nil without a data plane
	router    *locality.Tier  // nil without a data plane
	svc       *locsvc.Service // nil without a data plane
	candidate *placesvc.Runner
	view      *placesvc.View

	closeOnce sync.Once
	closeErr  error
}

// New builds the Plane cfg and d describe; nothing runs until Start.
func New(cfg Config, d Deps) (*Plane, error) {
	if d.Store == nil {
		return nil, errors.New("locality: no store")
	}
	p := &Plane{log: cfg.Logger, pins: cfg.Pins, st: d.Store}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if cfg.Campaign {
		// The runner logs its own events.
		if p.candidate, err = placesvc.NewRunner(cfg.Placement, p.st, nil); err != nil {
			_ = p.Close()
			return nil, fmt.Errorf("locality: %w", err)
		}
	}
	pc := cfg.Placement
	p.view = placesvc.NewView(p.st, pc.Prefix, pc.Regions, p.candidate, nil).
		WithCapacity(pc.CapacityCeiling, pc.CapacityMaxAge)
	if d.Inner == nil {
		return p, nil
	}
	if err := p.buildData(cfg, d); err != nil {
		_ = p.Close()
		return nil, err
	}
	return p, nil
}

// buildData builds the router, the links and the location service.
func (p *Plane) buildData(cfg Config, d Deps) error {
	if d.Loops == nil {
		return errors.New("locality: no loops")
	}
	rules, err := keyrule.New(cfg.Rules)
	if err != nil {
		return fmt.Errorf("locality.rule: %w", err)
	}
	if p.links, err = link.New(cfg.Link, d.Loops); err != nil {
		return fmt.Errorf("locality: %w", err)
	}
	loc, err := locationConfig(cfg)
	if err != nil {
		return err
	}
	if p.svc, err = locsvc.New(loc, p.st); err != nil {
		return fmt.Errorf("locality: %w", err)
	}
	p.router, err = locality.New(cfg.Router, locality.Deps{
		Inner: d.Inner, Rules: rules, Directory: p.svc, Links: p.links, Loops: d.Loops,
	})
	if err != nil {
		return fmt.Errorf("locality: %w", err)
	}
	return nil
}

// locationConfig is cfg.Location with the placement policy's half-life.
// The location service ages the counts it has not shipped yet with it,
// and the placement service the counts it received: with two half-lives
// an owner's count shipped late (a strata ships its own μ-shards' counts
// only once a peer uses them) would weigh what it would not have weighed
// shipped at once — with the default 1h against a policy's 1s, every
// access since the last shipment at full weight, an owner's score many
// times its rate of use, and travellers moved late or not at all.
func locationConfig(cfg Config) (locsvc.Config, error) {
	loc := cfg.Location
	hl := cfg.Placement.Policy.HalfLife
	if hl == 0 {
		hl = placement.DefaultHalfLife
	}
	switch loc.HalfLife {
	case 0:
		loc.HalfLife = hl
	case hl:
	default:
		return loc, fmt.Errorf("locality: the location service's half-life %v is not the placement policy's %v", loc.HalfLife, hl)
	}
	return loc, nil
}

// Router is what the proxy serves from: the router in front of
// Deps.Inner, or nil without a data plane.
func (p *Plane) Router() tiers.Tier {
	if p.router == nil {
		return nil
	}
	return p.router
}

// FillLease is the lease a migration's destination takes on a key while
// it reads the source: the router's default, or less when the grace
// window (which must outlast it) or maxTTL is shorter; whole seconds, at
// least one.
func FillLease(grace, maxTTL time.Duration) time.Duration {
	return max(min(locality.DefaultFillLease, grace, maxTTL).Truncate(time.Second), time.Second)
}

// PinTimeout bounds writing the rule pins in Start.
const PinTimeout = 2 * time.Second

// Start writes the rule pins, then starts the location service, feeding
// the router, and the candidate. The router resumes requests on the
// loops it was built with.
func (p *Plane) Start() {
	p.applyPins()
	if p.svc != nil {
		p.svc.Start(p.router)
	}
	if p.candidate != nil {
		p.candidate.Start()
	}
}

// applyPins writes every rule's pin (or lifts it); a failure is logged
// and waits for a restart.
func (p *Plane) applyPins() {
	ctx, cancel := context.WithTimeout(context.Background(), PinTimeout)
	defer cancel()
	for prefix, region := range p.pins {
		if err := p.view.PinRule(ctx, prefix, region); err != nil {
			p.log.Warn("locality: rule pin not applied", "prefix", prefix, "region", region, "err", err)
		}
	}
}

// readyPoll is how often AwaitReady looks at the location service.
const readyPoll = 10 * time.Millisecond

// AwaitReady waits until the location service is ready (its first read
// of the table done and its ack row written) or wait passed, and says
// which. Without a data plane it is ready at once.
func (p *Plane) AwaitReady(wait time.Duration) bool {
	if p.svc == nil {
		return true
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for !p.svc.Ready() {
		select {
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// Stop ends what Start started, then closes the links and the store
// client, within ctx.
func (p *Plane) Stop(ctx context.Context) error {
	var errs []error
	if p.candidate != nil {
		errs = append(errs, p.candidate.Stop(ctx))
	}
	if p.svc != nil {
		errs = append(errs, p.svc.Stop(ctx))
	}
	errs = append(errs, p.Close())
	return errors.Join(errs...)
}

// Close releases what New built: the links and the store client.
// Idempotent: a failed start and the shutdown both end here.
func (p *Plane) Close() error {
	p.closeOnce.Do(func() {
		var errs []error
		if p.links != nil {
			errs = append(errs, p.links.Close())
		}
		errs = append(errs, p.st.Close())
		p.closeErr = errors.Join(errs...)
	})
	return p.closeErr
}

// RegionView is the per-region remote fraction the admin page shows for
// self, reusing an answer for placesvc.RegionsEvery.
func (p *Plane) RegionView(self string) *placesvc.RegionView {
	return p.view.RegionView(self, placesvc.RegionsEvery)
}
