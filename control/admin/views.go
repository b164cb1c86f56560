package admin

import (
	"time"

	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/tiers/promote"
)

// The views below implement this package's interfaces over the data
// plane's own types, so that the composition root passes the running
// objects instead of converting between their types and the API's. They
// only read and swap values those packages publish atomically, so every
// method is safe from any goroutine.

// Layering is what LayeredPromotion reads and replaces: the promotion
// policy and the L1 TTL cap of tiers/layered.Tier.
type Layering interface {
	Policy() *promote.Policy
	SetPolicy(p *promote.Policy)
	L1MaxTTL() time.Duration
	SetL1MaxTTL(d time.Duration) error
}

// LayeredPromotion is PromotionControl over a Layering.
type LayeredPromotion struct{ Layering }

var _ PromotionControl = LayeredPromotion{}

// Promotion is the policy and the TTL cap in force.
func (v LayeredPromotion) Promotion() Promotion {
	p := v.Policy()
	out := Promotion{Threshold: p.Threshold(), L1MaxTTL: Duration(v.L1MaxTTL())}
	for _, r := range p.Rules() {
		out.Rules = append(out.Rules, Rule{Prefix: r.Prefix, Threshold: r.Threshold})
	}
	return out
}

// SetPromotion swaps in a new policy; the next L2 hit decides with it. The
// TTL cap is set first: a cap the layering refuses leaves the policy as it
// was.
func (v LayeredPromotion) SetPromotion(p Promotion) error {
	rules := make([]promote.Rule, len(p.Rules))
	for i, r := range p.Rules {
		rules[i] = promote.Rule{Prefix: r.Prefix, Threshold: r.Threshold}
	}
	pol, err := promote.NewPolicy(p.Threshold, rules)
	if err != nil {
		return err
	}
	if err := v.SetL1MaxTTL(time.Duration(p.L1MaxTTL)); err != nil {
		return &FieldError{Field: "l1_max_ttl", Err: err}
	}
	v.SetPolicy(pol)
	return nil
}

// Sampling is what SamplerView reads and tunes: sampler.Sampler's rate,
// counters, live report and busiest keys.
type Sampling interface {
	Stats() sampler.Stats
	SetRate(rate uint64)
	Live() *sampler.Report
	TopKeys(n int, span time.Duration) []sampler.KeyRate
}

// SamplerView is SamplerControl and TopKeyView over a Sampling. Dir is
// the sample log's directory, fixed when the sampler was built.
type SamplerView struct {
	Sampling
	Dir string
}

var (
	_ SamplerControl = SamplerView{}
	_ TopKeyView     = SamplerView{}
)

// Sampler is the rate in force and the sampler's counters.
func (v SamplerView) Sampler() SamplerStatus {
	st := v.Stats()
	return SamplerStatus{Rate: st.Rate, Dir: v.Dir, Records: st.Recorded, Dropped: st.Dropped}
}

// SetSampleRate sets the rate; the next request is sampled with it.
func (v SamplerView) SetSampleRate(rate uint64) error {
	v.SetRate(rate)
	return nil
}

// Report is the sampler's live per-family report.
func (v SamplerView) Report() any { return v.Live() }

// TopKeys are the sampler's busiest sampled keys, for the page.
func (v SamplerView) TopKeys(n int, span time.Duration) []TopKey {
	keys := v.Sampling.TopKeys(n, span)
	out := make([]TopKey, len(keys))
	for i, k := range keys {
		out[i] = TopKey{Key: k.Key, Family: k.Family, Accesses: k.Accesses, Reads: k.Reads, L1Hits: k.L1Hits, PerSec: k.PerSec}
	}
	return out
}
