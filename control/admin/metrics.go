package admin

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strata-cache/strata/internal/tlsconn"
)

// Snapshot is what the data plane's counters read at one scrape. Every
// label value comes from a small fixed set (operation classes, results,
// tier names, configured servers), never from a key.
type Snapshot struct {
	// Requests by operation class and result, from the proxy.
	Requests []RequestCount
	// Latency histograms by operation class, from the proxy.
	Latencies []Histogram
	// TierRequests by tier ("l1", "l2") and result ("hit", "miss",
	// "error"), from the layering.
	TierRequests []TierCount
	// Promotions by result ("attempted", "done", "failed", "skipped").
	Promotions []LabeledCount
	// BackendErrors by tier, server address and kind ("error",
	// "timeout", ...), from the memcached pools.
	BackendErrors []BackendErrorCount
	// TierUsage is what each tier holds, when it knows.
	TierUsage []TierUsage

	ConnectionsCurrent int64
	ConnectionsTotal   uint64

	SamplerRecords uint64
	SamplerDropped uint64
	SampleRate     uint64

	PromotionThreshold uint32

	// LocalityRequests by result ("local", "forwarded", "wrong_owner",
	// "owner_unreachable"), LocalityMigrations finished and migrations in
	// flight, from locality routing. Every result is exported, at zero
	// when absent, so dashboards and alerts work before routing is on.
	LocalityRequests           []LabeledCount
	LocalityMigrations         uint64
	LocalityMigrationsInFlight int64
	// LocalityDecisions, LocalityMovesStarted, LocalityMoveReturns and
	// LocalityMovesRateLimited are the placement leader's while this
	// process leads (over all its leaderships; zero in a strata that never
	// led): decisions taken, moves started, those back to a region left
	// less than min_interval + max_ttl before, and decisions to move held
	// by their pair of regions' rate cap.
	LocalityDecisions, LocalityMovesStarted       uint64
	LocalityMoveReturns, LocalityMovesRateLimited uint64
	// LocalityCacheHits and LocalityCacheMisses are lookups of the
	// per-loop location caches; LocalityCounterBytes what the access
	// counters shipped to the store, LocalityForwardedBytes what was sent
	// and received over region links for forwarded requests. Together with
	// the data traffic they give the counters' share of it.
	LocalityCacheHits, LocalityCacheMisses uint64
	LocalityCounterBytes                   uint64
	LocalityForwardedBytes                 uint64
	// LocalityLinkRequests are the requests this strata sent over region
	// links: forwards, their retries, and a migration's source reads and
	// deletes. A request that arrived on a link is never sent again, so
	// the fleet's sum is bounded by what clients asked.
	LocalityLinkRequests uint64
	// LocalityLinkStallHeld are the writes the link client failed rather
	// than sent after a process stall (tiers/locality/link).
	LocalityLinkStallHeld uint64
	// LocalityLateRefused are link writes refused because they arrived
	// after the deadline their sender gave them up at.
	LocalityLateRefused uint64
	// StallRefused are the writes the proxy answered SERVER_ERROR because
	// they were read before a process stall; StallHeld, by tier, the
	// writes a memcached pool failed rather than sent after one.
	StallRefused uint64
	StallHeld    []LabeledCount
	// AuthAttempts and AuthFailures: client authentications tried and
	// failed ([auth]).
	AuthAttempts, AuthFailures uint64

	// TLSCertExpiry is when the client listener's certificate expires
	// (AddTLS), zero without TLS there.
	TLSCertExpiry time.Time
	// TLSSides are the handshakes by side (tlsconn.SideClient, SideLink,
	// SideBackend), for the sides that run TLS, in the order added.
	TLSSides []TLSSide
}

// TLSSide is one side's handshakes and their failures by reason.
type TLSSide struct {
	Side string
	tlsconn.Tally
}

// AddTLS records the client listener's handshakes, their failures by
// reason and its certificate's expiry.
func (s *Snapshot) AddTLS(handshakes uint64, errs map[string]uint64, notAfter time.Time) {
	s.TLSCertExpiry = notAfter
	s.AddTLSHandshakes(tlsconn.SideClient, tlsconn.Tally{Handshakes: handshakes, Errors: errs})
}

// AddTLSHandshakes adds t to side's counts: a side counted in several
// places (a link's listener and its dialler, several pools) is added up.
func (s *Snapshot) AddTLSHandshakes(side string, t tlsconn.Tally) {
	for i := range s.TLSSides {
		if s.TLSSides[i].Side == side {
			s.TLSSides[i].Tally = s.TLSSides[i].Plus(t)
			return
		}
	}
	s.TLSSides = append(s.TLSSides, TLSSide{Side: side, Tally: tlsconn.Tally{}.Plus(t)})
}

// LocalityResults are the result labels of strata_locality_requests_total.
var LocalityResults = []string{"local", "forwarded", "wrong_owner", "owner_unreachable"}

// RequestCount is strata_requests_total{op,result}.
type RequestCount struct {
	Op, Result string
	Count      uint64
}

// Histogram is one strata_request_duration_seconds{op} histogram: Counts[i]
// is the cumulative number of observations at or below Bounds[i] seconds.
type Histogram struct {
	Op         string
	Bounds     []float64
	Counts     []uint64
	Count      uint64
	SumSeconds float64
}

// TierCount is strata_tier_requests_total{tier,result}.
type TierCount struct {
	Tier, Result string
	Count        uint64
}

// LabeledCount is a counter with one label.
type LabeledCount struct {
	Label string
	Count uint64
}

// BackendErrorCount is strata_backend_errors_total{tier,server,kind}.
type BackendErrorCount struct {
	Tier, Server, Kind string
	Count              uint64
}

// TierUsage is the items, bytes and evictions of one tier.
type TierUsage struct {
	Tier      string
	Items     uint64
	Bytes     uint64
	Evictions uint64
}

// Collector turns a MetricsSource into Prometheus metrics at scrape time.
// It holds no state between scrapes, so counting stays in the packages'
// plain counters and adds nothing to the request path.
type Collector struct {
	src MetricsSource

	requests, duration, tierRequests, promotions, backendErrors *prometheus.Desc
	items, bytes, evictions                                     *prometheus.Desc
	conns, connsTotal                                           *prometheus.Desc
	samplerRecords, samplerDropped, sampleRate, threshold       *prometheus.Desc
	locality, migrations, inFlight                              *prometheus.Desc
	decisions, movesStarted, moveReturns, rateLimited           *prometheus.Desc
	locCache, counterBytes, forwardedBytes, linkRequests        *prometheus.Desc
	linkStallHeld                                               *prometheus.Desc
	stallRefused, stallHeld, lateRefused, auth                  *prometheus.Desc
	tlsHandshakes, tlsErrors, tlsExpiry                         *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector over src.
func NewCollector(src MetricsSource) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &Collector{
		src:            src,
		requests:       d("strata_requests_total", "Client requests answered, by operation class and result.", "op", "result"),
		duration:       d("strata_request_duration_seconds", "Time from parsing a request to its reply being ready.", "op"),
		tierRequests:   d("strata_tier_requests_total", "Cacheable reads served by each tier, by result.", "tier", "result"),
		promotions:     d("strata_promotions_total", "Promotions of L2 hits into L1, by result.", "result"),
		backendErrors:  d("strata_backend_errors_total", "Failed requests to memcached servers, by tier, server and kind.", "tier", "server", "kind"),
		items:          d("strata_tier_items", "Items held by a tier.", "tier"),
		bytes:          d("strata_tier_bytes", "Bytes held by a tier.", "tier"),
		evictions:      d("strata_tier_evictions_total", "Live items a tier dropped for room.", "tier"),
		conns:          d("strata_connections", "Client connections open now."),
		connsTotal:     d("strata_connections_total", "Client connections accepted."),
		samplerRecords: d("strata_sampler_records_total", "Accesses to sampled keys recorded."),
		samplerDropped: d("strata_sampler_dropped_total", "Sample records dropped because the ring was full."),
		sampleRate:     d("strata_sampler_rate", "Current sample rate: one key in rate is sampled, 0 is off."),
		threshold:      d("strata_promotion_threshold", "Current global promotion threshold N."),
		locality:       d("strata_locality_requests_total", "Requests routed by locality, by result.", "result"),
		migrations:     d("strata_locality_migrations_total", "μ-shard migrations finished."),
		inFlight:       d("strata_locality_migrations_in_flight", "μ-shard migrations started and not yet finished."),
		decisions:      d("strata_locality_decisions_total", "Placement decisions the placement leader in this process took (one per μ-shard due at a round)."),
		movesStarted:   d("strata_locality_moves_started_total", "μ-shard migrations the placement leader in this process started."),
		moveReturns:    d("strata_locality_move_returns_total", "Migrations started back to a region the μ-shard left less than min_interval + max_ttl before."),
		rateLimited:    d("strata_locality_moves_rate_limited_total", "Decisions to migrate held back by the rate cap of their pair of regions (again at each round held)."),
		locCache:       d("strata_locality_location_cache_total", "Lookups of the per-loop location caches, by result.", "result"),
		counterBytes:   d("strata_locality_counter_bytes_total", "Bytes of access-counter batches shipped to the control store."),
		forwardedBytes: d("strata_locality_forwarded_bytes_total", "Bytes sent and received over region links for forwarded requests."),
		linkRequests:   d("strata_locality_link_requests_total", "Requests sent over region links: forwards, retries, source reads and deletes."),
		linkStallHeld:  d("strata_locality_link_stall_held_total", "Writes for region links failed rather than sent after a process stall."),
		auth:           d("strata_auth_attempts_total", "Client authentication attempts ([auth]), by result.", "result"),
		lateRefused:    d("strata_locality_late_writes_refused_total", "Link writes refused because they arrived after their sender gave them up."),
		stallRefused:   d("strata_stall_refused_writes_total", "Client writes answered SERVER_ERROR because they were read before a process stall."),
		stallHeld:      d("strata_stall_held_writes_total", "Writes a memcached pool failed rather than sent after a process stall, by tier.", "tier"),
		tlsHandshakes:  d("strata_tls_handshakes_total", "TLS handshakes attempted, by side: client (the memcached listener), link (region links, both ways), backend (memcached servers).", "side"),
		tlsErrors:      d("strata_tls_handshake_errors_total", "TLS handshakes failed, by reason and side.", "reason", "side"),
		tlsExpiry:      d("strata_tls_cert_expiry_timestamp_seconds", "When the client listener's certificate expires, in Unix seconds."),
	}
}

// Describe sends every metric's descriptor.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.requests, c.duration, c.tierRequests, c.promotions, c.backendErrors,
		c.items, c.bytes, c.evictions, c.conns, c.connsTotal,
		c.samplerRecords, c.samplerDropped, c.sampleRate, c.threshold,
		c.locality, c.migrations, c.inFlight, c.decisions, c.movesStarted, c.moveReturns, c.rateLimited,
		c.locCache, c.counterBytes, c.forwardedBytes, c.linkRequests, c.linkStallHeld, c.stallRefused, c.stallHeld, c.lateRefused, c.auth,
		c.tlsHandshakes, c.tlsErrors, c.tlsExpiry,
	} {
		ch <- d
	}
}

// Collect reads the source once and emits its values.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	var s Snapshot
	c.src.Metrics(&s)
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, r := range s.Requests {
		counter(c.requests, r.Count, r.Op, r.Result)
	}
	for _, h := range s.Latencies {
		buckets := make(map[float64]uint64, len(h.Bounds))
		for i, b := range h.Bounds {
			if i < len(h.Counts) {
				buckets[b] = h.Counts[i]
			}
		}
		ch <- prometheus.MustNewConstHistogram(c.duration, h.Count, h.SumSeconds, buckets, h.Op)
	}
	for _, t := range s.TierRequests {
		counter(c.tierRequests, t.Count, t.Tier, t.Result)
	}
	for _, p := range s.Promotions {
		counter(c.promotions, p.Count, p.Label)
	}
	// A server can appear twice across a reload of the server list; one
	// series per label set is what Prometheus accepts.
	backend := make(map[[3]string]uint64, len(s.BackendErrors))
	for _, e := range s.BackendErrors {
		backend[[3]string{e.Tier, e.Server, e.Kind}] += e.Count
	}
	for l, n := range backend {
		counter(c.backendErrors, n, l[0], l[1], l[2])
	}
	for _, u := range s.TierUsage {
		gauge(c.items, float64(u.Items), u.Tier)
		gauge(c.bytes, float64(u.Bytes), u.Tier)
		counter(c.evictions, u.Evictions, u.Tier)
	}
	gauge(c.conns, float64(s.ConnectionsCurrent))
	counter(c.connsTotal, s.ConnectionsTotal)
	counter(c.samplerRecords, s.SamplerRecords)
	counter(c.samplerDropped, s.SamplerDropped)
	gauge(c.sampleRate, float64(s.SampleRate))
	if s.PromotionThreshold > 0 {
		gauge(c.threshold, float64(s.PromotionThreshold))
	}
	loc := make(map[string]uint64, len(LocalityResults))
	for _, r := range LocalityResults {
		loc[r] = 0
	}
	for _, l := range s.LocalityRequests {
		loc[l.Label] += l.Count
	}
	for r, n := range loc {
		counter(c.locality, n, r)
	}
	counter(c.migrations, s.LocalityMigrations)
	gauge(c.inFlight, float64(s.LocalityMigrationsInFlight))
	counter(c.decisions, s.LocalityDecisions)
	counter(c.movesStarted, s.LocalityMovesStarted)
	counter(c.moveReturns, s.LocalityMoveReturns)
	counter(c.rateLimited, s.LocalityMovesRateLimited)
	counter(c.locCache, s.LocalityCacheHits, "hit")
	counter(c.locCache, s.LocalityCacheMisses, "miss")
	counter(c.counterBytes, s.LocalityCounterBytes)
	counter(c.forwardedBytes, s.LocalityForwardedBytes)
	counter(c.linkRequests, s.LocalityLinkRequests)
	counter(c.linkStallHeld, s.LocalityLinkStallHeld)
	counter(c.stallRefused, s.StallRefused)
	counter(c.lateRefused, s.LocalityLateRefused)
	counter(c.auth, s.AuthAttempts-min(s.AuthAttempts, s.AuthFailures), "ok")
	counter(c.auth, s.AuthFailures, "failed")
	for _, h := range s.StallHeld {
		counter(c.stallHeld, h.Count, h.Label)
	}
	if !s.TLSCertExpiry.IsZero() {
		gauge(c.tlsExpiry, float64(s.TLSCertExpiry.Unix()))
	}
	for _, side := range s.TLSSides {
		counter(c.tlsHandshakes, side.Handshakes, side.Side)
		for _, r := range tlsconn.Reasons {
			counter(c.tlsErrors, side.Errors[r], r, side.Side)
		}
	}
}
