package main

import (
	"encoding/json"
	"strings"

	"github.com/strata-cache/strata/config"
	"github.com/strata-cache/strata/internal/configfile"
	"github.com/strata-cache/strata/internal/tlsconn"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/hotkeys"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/memcached"
)

// adminView is the app as the admin server sees it: the interfaces of
// admin.Deps over the running packages.
type adminView struct{ a *app }

var (
	_ admin.TierView      = adminView{}
	_ admin.ConfigView    = adminView{}
	_ admin.MetricsSource = adminView{}
	_ admin.Endpoint      = (*proxy.Server)(nil)
	_ admin.Layering      = (*layered.Tier)(nil)
	_ admin.Sampling      = (*sampler.Sampler)(nil)

	_ admin.TierStats = (*embedded.Store)(nil)
	_ admin.TierStats = (*memcached.Pool)(nil)
	_ admin.TierStats = (*hotkeys.Tier)(nil)
	_ admin.TierStats = layered.Layer{}
)

func (v adminView) Tiers() []admin.TierStatus {
	l1, l2 := v.a.adminTiers()
	return []admin.TierStatus{l1.Status(), l2.Status()}
}

// adminTiers are L1 (kind none without one) and L2 as the admin API and
// /metrics read them.
func (a *app) adminTiers() (l1, l2 admin.Tier) {
	l1 = admin.Tier{Name: "l1", Kind: config.KindNone, Layer: a.layered.L1Layer()}
	if a.l1 != nil {
		l1 = a.l1.adminTier(a.layered.L1Layer())
	}
	l2 = a.l2.adminTier(a.layered.L2Layer())
	l1.Managed, l2.Managed = a.control.Manages(l1.Name), a.control.Manages(l2.Name)
	return l1, l2
}

// EffectiveConfig is the configuration in force, in the file's shape,
// with the values tuned at run time and without the token itself.
func (v adminView) EffectiveConfig() any {
	s := v.a.settings()
	eff := s.Effective
	p := v.a.layered.Policy()
	eff.Promotion.Threshold, eff.Promotion.Rules = new(int64(p.Threshold())), nil
	for _, r := range p.Rules() {
		eff.Promotion.Rules = append(eff.Promotion.Rules, config.RuleSection{Prefix: new(r.Prefix), Threshold: new(int64(r.Threshold))})
	}
	eff.L1.MaxTTL = configfile.Duration(v.a.layered.L1MaxTTL())
	eff.Sampler.Rate = new(int64(v.a.sampler.Rate()))
	eff.Log.Level = strings.ToLower(v.a.level.Level().String())

	var m map[string]any
	b, _ := json.Marshal(eff)
	_ = json.Unmarshal(b, &m)
	if adm, ok := m["admin"].(map[string]any); ok {
		adm["token"] = ""
		if s.Admin.Token != "" {
			adm["token"] = "(redacted)"
		}
	}
	m["config_file"] = s.Path
	return m
}

// Metrics reads every counter once. The proxy's counters are per event
// loop and summed here; the others are atomics of their packages.
func (v adminView) Metrics(s *admin.Snapshot) {
	a := v.a
	for _, c := range a.proxy.RequestCounts() {
		s.Requests = append(s.Requests, admin.RequestCount{Op: c.Op.String(), Result: c.Status.String(), Count: c.Count})
	}
	for _, l := range a.proxy.Latencies() {
		s.Latencies = append(s.Latencies, admin.Histogram{Op: l.Op.String(), Bounds: latencyBounds, Counts: l.Buckets, Count: l.Count, SumSeconds: l.SumSeconds})
	}
	s.AddTiers(a.adminTiers())
	c := a.proxy.Counters()
	s.ConnectionsCurrent, s.ConnectionsTotal, s.StallRefused = c.ConnsCurrent, c.ConnsTotal, c.StallRefused
	s.AuthAttempts, s.AuthFailures = c.AuthAttempts, c.AuthFailures
	st := a.sampler.Stats()
	s.SamplerRecords, s.SamplerDropped, s.SampleRate = st.Recorded, st.Dropped, st.Rate
	s.PromotionThreshold = a.layered.Policy().Threshold()
	if st, ok := a.proxy.TLSStats(); ok {
		s.AddTLS(st.Handshakes, st.Errors, st.NotAfter)
	}
	if t, ok := a.proxy.LinkTLSHandshakes(); ok {
		s.AddTLSHandshakes(tlsconn.SideLink, t)
	}
	for _, h := range a.tierHandles() {
		if t, ok := h.pool.tlsHandshakes(); ok {
			s.AddTLSHandshakes(tlsconn.SideBackend, t)
		}
	}
	if a.locality != nil {
		a.locality.Metrics(s)
	}
}

// latencyBounds are the proxy's histogram bounds; they never change.
var latencyBounds = proxy.LatencyBuckets()
