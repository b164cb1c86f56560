package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/locality/plane"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/link"
)

// buildLocality wraps inner with the router when s has [locality]; it
// returns inner and nil otherwise. The router and the link client run on
// loops (the link client joins them, so the proxy starts and flushes it).
// member names this process in the store (acks, counters, capacity, the
// election); capacity measures the region's cache memory for the
// placement service (nil: not reported).
func buildLocality(ss *stores, s *config.Settings, inner tiers.Tier, loops *proxy.Loops, member string, capacity func() (used, limit uint64, ok bool), log *slog.Logger) (tiers.Tier, *plane.Plane, error) {
	l := s.Locality
	if !l.Enabled {
		return inner, nil, nil
	}
	if len(s.Control.Etcd) == 0 && !s.Control.Leader {
		return nil, nil, errors.New("control.leader = false with [locality] needs control.etcd: with the in-memory store no other process can run the placement service")
	}
	peers := make(map[string]string, len(l.Peers))
	for _, p := range l.Peers {
		peers[p.Region] = p.Link
	}
	cfg := localityPlaneConfig(s, member, s.Control.Leader, log)
	cfg.Link = link.Config{Peers: peers, Timeout: l.ForwardTimeout, MaxValue: s.Proxy.Limits.MaxItemSize}
	if l.TLS != nil {
		cfg.Link.TLS = l.TLS.Client
	}
	cfg.Location = locsvc.Config{
		Region: l.Region, Member: member, Prefix: l.StorePrefix,
		ReadTimeout: l.ForwardTimeout, CounterInterval: l.CounterInterval,
		SessionTTL: s.Control.SessionTTL, CacheCapacity: l.Cache.Capacity,
		Capacity: capacity, FenceAfter: l.FenceAfter, Logger: log.With("component", "locality"),
	}
	cfg.Router = locality.Config{
		Region: l.Region, MaxTTL: l.Policy.MaxTTL, ForwardTimeout: l.ForwardTimeout,
		FillLease: plane.FillLease(l.Grace, l.Policy.MaxTTL), Cache: l.Cache,
	}
	cfg.Rules = l.Rules
	st, err := ss.open(s.Control)
	if err != nil {
		return nil, nil, fmt.Errorf("locality: %w", err)
	}
	lp, err := plane.New(cfg, plane.Deps{Store: st, Inner: inner, Loops: loops})
	if err != nil {
		return nil, nil, err
	}
	return lp.Router(), lp, nil
}

// newLocalityControl builds what both strata serve and strata control
// run: the placement candidate (when campaign) and the admin view.
func newLocalityControl(ss *stores, s *config.Settings, member string, campaign bool, log *slog.Logger) (*plane.Plane, error) {
	st, err := ss.open(s.Control)
	if err != nil {
		return nil, fmt.Errorf("locality: %w", err)
	}
	return plane.New(localityPlaneConfig(s, member, campaign, log), plane.Deps{Store: st})
}

// localityPlaneConfig maps s to the plane's control part: the placement
// candidate and view, and the rule pins.
func localityPlaneConfig(s *config.Settings, member string, campaign bool, log *slog.Logger) plane.Config {
	l := s.Locality
	return plane.Config{
		Campaign: campaign,
		Placement: placesvc.Config{
			Prefix: l.StorePrefix, Policy: l.Policy, Regions: l.Regions(), Grace: l.Grace,
			Seed: uint64(time.Now().UnixNano()), Candidate: member, SessionTTL: s.Control.SessionTTL,
			CapacityCeiling: l.CapacityCeiling, CapacityMaxAge: placesvc.CapacityMaxAgeFor(l.CounterInterval),
			FenceAfter: l.FenceAfter, Logger: log.With("component", "placement"),
		},
		Pins:   l.RulePins,
		Logger: log,
	}
}

// localityProxyOptions give the proxy the link listener. The link client
// needs no option: it joined the proxy's loops when built.
func localityProxyOptions(s *config.Settings) []proxy.Option {
	opts := []proxy.Option{proxy.WithLink(s.Locality.LinkListen)}
	if t := s.Locality.TLS; t != nil {
		opts = append(opts, proxy.WithLinkTLS(t.Server))
	}
	return opts
}

// localityReadyWait bounds how long strata serve waits at start for the
// location service to be ready before it takes clients. A store that is
// down at start does not keep the proxy from serving the keys no rule
// claims.
const localityReadyWait = 5 * time.Second
