package admin

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/control/admin/history"
	"github.com/strata-cache/strata/internal/configfile"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/promote"
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
	// Clock is what the page's history samples Metrics on, once a second;
	// it must be set with Metrics. strata passes the stall heartbeat's
	// (stall.Process), which carries the sample on its own wake-ups.
	Clock    history.Clock
	HotKeys  HotKeyView
	Endpoint Endpoint // /readyz fails while it is not ready
	TopKeys  TopKeyView
	Shards   ShardControl
	// ServerPID is a memcached server's process id, by which a maintenance
	// walk sees it restart; nil asks the server's stats over TCP
	// (MemcachedPID).
	ServerPID PIDFunc
	Locality  LocalityControl
	Regions   RegionView // read only with Locality
	// TLS is what the listener handshakes with when Config.TLS is set:
	// the memcached listener's (its GetConfigForClient reads the material
	// in force, so a reload reaches both).
	TLS *tls.Config
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

// checkPromotion judges a promotion by the data plane's own rules
// (tiers/promote for the thresholds and rules, tiers/layered for the L1
// TTL cap) and names the first field that breaks them, as the API spells
// it.
func checkPromotion(p *Promotion) error {
	rules := make([]promote.Rule, len(p.Rules))
	for i, r := range p.Rules {
		rules[i] = promote.Rule{Prefix: r.Prefix, Threshold: r.Threshold}
	}
	var fe *promote.FieldError
	if err := promote.Validate(p.Threshold, rules); errors.As(err, &fe) {
		// "Threshold", "Rules[1].Prefix": the API's names are the same,
		// lower-cased.
		return fieldErr(strings.ToLower(fe.Field), "%v", fe.Err)
	} else if err != nil {
		return err
	}
	if err := layered.CheckL1MaxTTL(time.Duration(p.L1MaxTTL)); err != nil {
		return fieldErr("l1_max_ttl", "%v", err)
	}
	return nil
}
