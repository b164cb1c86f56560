package admin

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/internal/configfile"
)

// The interfaces below are what the admin server consumes. cmd/strata
// implements them over the running packages; every method may be called
// from any goroutine, concurrently with requests being served.

// PromotionControl reads and replaces the promotion settings.
type PromotionControl interface {
	Promotion() Promotion
	// SetPromotion applies p whole. A value the data plane refuses comes
	// back as a *FieldError when the field is known.
	SetPromotion(p Promotion) error
}

// SamplerControl reads and tunes the key-hash sampler.
type SamplerControl interface {
	Sampler() SamplerStatus
	SetSampleRate(rate uint64) error
	// Report is the sampler's live per-family report; it must marshal to
	// JSON.
	Report() any
}

// TierView lists the cache tiers with their servers and counters.
type TierView interface {
	Tiers() []TierStatus
}

// ConfigView returns the effective configuration, secrets already
// redacted; it must marshal to JSON.
type ConfigView interface {
	EffectiveConfig() any
}

// MetricsSource fills a snapshot of the data plane's counters at scrape
// time. It reads plain counters; it must not block the request path.
type MetricsSource interface {
	Metrics(s *Snapshot)
}

// Endpoint is the memcached endpoint's own readiness: Ready is nil while it
// takes new connections, an error while it does not (draining, or accepting
// paused at the descriptor limit).
type Endpoint interface {
	Ready() error
}

// Deps are the parts of strata the admin server reads and tunes. A nil
// field disables what depends on it: its endpoints answer 404 and its
// metrics are absent.
type Deps struct {
	Promotion PromotionControl
	Sampler   SamplerControl
	Tiers     TierView
	Config    ConfigView
	Metrics   MetricsSource
	HotKeys   HotKeyView
	Endpoint  Endpoint // /readyz fails while it is not ready
	TopKeys   TopKeyView
	Shards    ShardControl
	Locality  LocalityControl
	Regions   RegionView // read only with Locality
}

// Promotion is the body of GET and PUT /admin/v1/promotion.
type Promotion struct {
	// Threshold is the global N: an L2 hit is promoted with probability 1/N.
	Threshold uint32 `json:"threshold"`
	// Rules override Threshold for key prefixes; the longest prefix wins.
	Rules []Rule `json:"rules"`
	// L1MaxTTL caps the TTL of a promoted copy.
	L1MaxTTL Duration `json:"l1_max_ttl"`
}

// Rule is one per-prefix promotion threshold.
type Rule struct {
	Prefix    string `json:"prefix"`
	Threshold uint32 `json:"threshold"`
}

// Bounds of the promotion settings. They are the data plane's own: a
// threshold of 1 promotes every L2 hit, and a promoted copy lives at least
// a second and at most memcached's 30-day relative TTL.
const (
	MinThreshold = 1
	MaxThreshold = 1 << 31
	MinL1MaxTTL  = time.Second
	MaxL1MaxTTL  = 30 * 24 * time.Hour
)

// SamplerStatus is the body of GET /admin/v1/sampler.
type SamplerStatus struct {
	// Rate samples a key iff hash(key) mod Rate == 0; 0 samples nothing.
	Rate    uint64 `json:"rate"`
	Dir     string `json:"dir,omitempty"`
	Records uint64 `json:"records"`
	Dropped uint64 `json:"dropped"`
}

// TierStatus is one cache tier in GET /admin/v1/tiers.
type TierStatus struct {
	Name     string            `json:"name"` // "l1" or "l2"
	Kind     string            `json:"kind"` // "embedded", "memcached" or "none"
	Servers  []ServerStatus    `json:"servers,omitempty"`
	Counters map[string]uint64 `json:"counters"`
	// Managed: the control plane publishes this tier's shard map, which
	// GET /admin/v1/shardmap?tier=NAME returns.
	Managed bool `json:"managed,omitempty"`
}

// ServerStatus is one memcached server of a pool tier.
type ServerStatus struct {
	Addr     string            `json:"addr"`
	Weight   int               `json:"weight"`
	State    string            `json:"state"` // "up" (ServerUp: it serves), "down", or "returning" (answering, being made safe)
	Counters map[string]uint64 `json:"counters,omitempty"`
}

// ServerUp is the State of a server that serves requests.
const ServerUp = "up"

// Tier kinds.
const (
	KindEmbedded  = "embedded"
	KindMemcached = "memcached"
	KindNone      = "none"
)

// ready reports whether every tier can serve: an embedded tier always can,
// a pool needs at least one server up.
func ready(ts []TierStatus) error {
	for _, t := range ts {
		if t.Kind != KindMemcached {
			continue
		}
		up := 0
		for _, s := range t.Servers {
			if s.State == ServerUp {
				up++
			}
		}
		if up == 0 {
			return fmt.Errorf("tier %s: none of its %d servers is up", t.Name, len(t.Servers))
		}
	}
	return nil
}

// FieldError is a refused value of one request field. It becomes a 400
// reply whose body names the field.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Duration is a time.Duration spelt as a Go duration string in JSON
// ("60s", "1m30s"): in one unit when it can be, whole hours, else whole
// minutes above one, else seconds ("1h", "30m", "60s").
type Duration time.Duration

// String renders d the way the configuration file spells durations.
func (d Duration) String() string { return configfile.FormatDuration(time.Duration(d)) }

// MarshalJSON writes d as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(strconv.Quote(d.String())), nil
}

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return errors.New(`want a duration string such as "60s"`)
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"60s\"", s)
	}
	*d = Duration(v)
	return nil
}

// checkPromotion enforces the documented bounds and names the first field
// that breaks them.
func checkPromotion(p *Promotion) error {
	if p.Threshold < MinThreshold || uint64(p.Threshold) > MaxThreshold {
		return fieldErr("threshold", "%d is out of range: must be between %d and %d", p.Threshold, MinThreshold, uint64(MaxThreshold))
	}
	seen := make(map[string]bool, len(p.Rules))
	for i, r := range p.Rules {
		f := "rules[" + strconv.Itoa(i) + "]"
		if r.Prefix == "" {
			return fieldErr(f+".prefix", "must not be empty")
		}
		if seen[r.Prefix] {
			return fieldErr(f+".prefix", "%q is given twice", r.Prefix)
		}
		seen[r.Prefix] = true
		if r.Threshold < MinThreshold || uint64(r.Threshold) > MaxThreshold {
			return fieldErr(f+".threshold", "%d is out of range: must be between %d and %d", r.Threshold, MinThreshold, uint64(MaxThreshold))
		}
	}
	ttl := time.Duration(p.L1MaxTTL)
	if ttl < MinL1MaxTTL || ttl > MaxL1MaxTTL {
		return fieldErr("l1_max_ttl", "%s is out of range: must be between 1s and 720h", p.L1MaxTTL)
	}
	return nil
}
