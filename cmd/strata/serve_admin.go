package main

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/hotkeys"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/promote"
)

// adminView is the app as the admin server sees it: the interfaces of
// admin.Deps over the running packages.
type adminView struct{ a *app }

var (
	_ admin.PromotionControl = adminView{}
	_ admin.SamplerControl   = adminView{}
	_ admin.TierView         = adminView{}
	_ admin.ConfigView       = adminView{}
	_ admin.MetricsSource    = adminView{}
	_ admin.Endpoint         = (*proxy.Server)(nil)

	_ admin.TierStats = (*embedded.Store)(nil)
	_ admin.TierStats = (*memcached.Pool)(nil)
	_ admin.TierStats = (*hotkeys.Tier)(nil)
	_ admin.TierStats = layered.Layer{}
)

func (v adminView) Promotion() admin.Promotion {
	p := v.a.layered.Policy()
	out := admin.Promotion{Threshold: p.Threshold(), L1MaxTTL: admin.Duration(v.a.layered.L1MaxTTL())}
	for _, r := range p.Rules() {
		out.Rules = append(out.Rules, admin.Rule{Prefix: r.Prefix, Threshold: r.Threshold})
	}
	return out
}

// SetPromotion swaps in a new policy; the next L2 hit decides with it.
func (v adminView) SetPromotion(p admin.Promotion) error {
	rules := make([]promote.Rule, len(p.Rules))
	for i, r := range p.Rules {
		rules[i] = promote.Rule{Prefix: r.Prefix, Threshold: r.Threshold}
	}
	pol, err := promote.NewPolicy(p.Threshold, rules)
	if err != nil {
		return err
	}
	if err := v.a.layered.SetL1MaxTTL(time.Duration(p.L1MaxTTL)); err != nil {
		return &admin.FieldError{Field: "l1_max_ttl", Err: err}
	}
	v.a.layered.SetPolicy(pol)
	return nil
}

func (v adminView) Sampler() admin.SamplerStatus {
	st := v.a.sampler.Stats()
	return admin.SamplerStatus{Rate: st.Rate, Dir: v.a.settings().Sampler.Dir, Records: st.Recorded, Dropped: st.Dropped}
}

func (v adminView) SetSampleRate(rate uint64) error {
	v.a.sampler.SetRate(rate)
	return nil
}

func (v adminView) Report() any { return v.a.sampler.Live() }

func (v adminView) Tiers() []admin.TierStatus {
	l1, l2 := v.a.adminTiers()
	return []admin.TierStatus{l1.Status(), l2.Status()}
}

// adminTiers are L1 (kind none without one) and L2 as the admin API and
// /metrics read them.
func (a *app) adminTiers() (l1, l2 admin.Tier) {
	l1 = admin.Tier{Name: "l1", Kind: KindNone, Layer: a.layered.L1Layer()}
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
	eff := s.eff
	p := v.a.layered.Policy()
	n := int64(p.Threshold())
	eff.Promotion.Threshold = &n
	eff.Promotion.Rules = nil
	for _, r := range p.Rules() {
		prefix, t := r.Prefix, int64(r.Threshold)
		eff.Promotion.Rules = append(eff.Promotion.Rules, ruleSection{Prefix: &prefix, Threshold: &t})
	}
	eff.L1.MaxTTL = duration(v.a.layered.L1MaxTTL())
	rate := int64(v.a.sampler.Rate())
	eff.Sampler.Rate = &rate
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
	m["config_file"] = s.file
	return m
}

// Metrics reads every counter once. The proxy's counters are per event
// loop and summed here; the others are atomics of their packages.
func (v adminView) Metrics(s *admin.Snapshot) {
	a := v.a
	for _, c := range a.proxy.RequestCounts() {
		s.Requests = append(s.Requests, admin.RequestCount{Op: c.Op.String(), Result: c.Status.String(), Count: c.Count})
	}
	bounds := latencyBounds
	for _, l := range a.proxy.Latencies() {
		s.Latencies = append(s.Latencies, admin.Histogram{Op: l.Op.String(), Bounds: bounds, Counts: l.Buckets, Count: l.Count, SumSeconds: l.SumSeconds})
	}
	s.AddTiers(a.adminTiers())
	c := a.proxy.Counters()
	s.ConnectionsCurrent, s.ConnectionsTotal = c.ConnsCurrent, c.ConnsTotal
	st := a.sampler.Stats()
	s.SamplerRecords, s.SamplerDropped, s.SampleRate = st.Recorded, st.Dropped, st.Rate
	s.PromotionThreshold = a.layered.Policy().Threshold()
	if a.locality != nil {
		a.locality.Metrics(s)
	}
}

// latencyBounds are the proxy's histogram bounds; they never change.
var latencyBounds = proxy.LatencyBuckets()

var _ admin.TopKeyView = adminView{}

// TopKeys are the sampler's busiest sampled keys, for the page.
func (v adminView) TopKeys(n int, span time.Duration) []admin.TopKey {
	keys := v.a.sampler.TopKeys(n, span)
	out := make([]admin.TopKey, len(keys))
	for i, k := range keys {
		out[i] = admin.TopKey{Key: k.Key, Family: k.Family, Accesses: k.Accesses, Reads: k.Reads, L1Hits: k.L1Hits, PerSec: k.PerSec}
	}
	return out
}
