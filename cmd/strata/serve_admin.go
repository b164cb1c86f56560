package main

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/proxy"
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
	ls := v.a.layered.Stats()
	var out []admin.TierStatus
	if v.a.l1 != nil {
		out = append(out, v.a.l1.status(map[string]uint64{
			"hits": ls.L1Hits, "misses": ls.L1Misses, "errors": ls.L1Errors,
			"promotions_attempted": ls.PromotionsAttempted, "promotions_done": ls.PromotionsDone,
			"promotions_failed": ls.PromotionsFailed, "promotions_skipped": ls.PromotionsSkipped,
		}))
	} else {
		out = append(out, admin.TierStatus{Name: "l1", Kind: KindNone, Counters: map[string]uint64{}})
	}
	out = append(out, v.a.l2.status(map[string]uint64{
		"hits": ls.L2Hits, "misses": ls.L2Misses, "errors": ls.L2Errors, "writes_delayed": ls.WritesDelayed,
	}))
	for i := range out {
		out[i].Managed = v.a.control.manages(out[i].Name)
	}
	return out
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
	ls := a.layered.Stats()
	if a.l1 != nil {
		s.TierRequests = append(s.TierRequests,
			admin.TierCount{Tier: "l1", Result: "hit", Count: ls.L1Hits},
			admin.TierCount{Tier: "l1", Result: "miss", Count: ls.L1Misses},
			admin.TierCount{Tier: "l1", Result: "error", Count: ls.L1Errors})
	}
	s.TierRequests = append(s.TierRequests,
		admin.TierCount{Tier: "l2", Result: "hit", Count: ls.L2Hits},
		admin.TierCount{Tier: "l2", Result: "miss", Count: ls.L2Misses},
		admin.TierCount{Tier: "l2", Result: "error", Count: ls.L2Errors})
	s.Promotions = []admin.LabeledCount{
		{Label: "attempted", Count: ls.PromotionsAttempted},
		{Label: "done", Count: ls.PromotionsDone},
		{Label: "failed", Count: ls.PromotionsFailed},
		{Label: "skipped", Count: ls.PromotionsSkipped},
	}
	for _, h := range a.tierHandles() {
		if u, ok := h.usage(); ok {
			s.TierUsage = append(s.TierUsage, u)
		}
		if h.pool != nil {
			s.BackendErrors = append(s.BackendErrors, h.pool.backendErrors(h.name)...)
		}
	}
	c := a.proxy.Counters()
	s.ConnectionsCurrent, s.ConnectionsTotal = c.ConnsCurrent, c.ConnsTotal
	st := a.sampler.Stats()
	s.SamplerRecords, s.SamplerDropped, s.SampleRate = st.Recorded, st.Dropped, st.Rate
	s.PromotionThreshold = a.layered.Policy().Threshold()
	if a.locality != nil {
		a.locality.metrics(s)
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
