package history

import (
	"math"
	"time"
)

// Counters are cumulative values read at one instant. Latency counts are
// cumulative per bound (Prometheus style), summed over operation classes.
type Counters struct {
	L1Reads, L1Hits uint64 // zero L1Reads: there is no L1 tier
	L2Reads, L2Hits uint64
	Requests        uint64 // client requests answered
	Errors          uint64 // tier errors and backend errors
	Promotions      uint64 // promotions done
	PromotionsFail  uint64
	Conns           int64 // open now: a gauge, not a counter

	// Locality routing: requests it routed, those that went or were meant
	// for another region, and μ-shard migrations finished. All zero
	// without locality routing.
	LocalityRequests, LocalityRemote, Migrations uint64
	// MigrationsInFlight are started and not finished now: a gauge.
	MigrationsInFlight int64

	LatencyBounds []float64 // seconds, ascending
	LatencyCounts []uint64  // LatencyCounts[i]: requests at or below LatencyBounds[i]
}

// Point is one interval of the series. Counts are deltas over the
// interval; the figures derived from them are included so a client can
// plot without arithmetic. A ratio without reads is -1 (no data), which
// the page draws as a gap.
type Point struct {
	T    int64   `json:"t"`    // end of the interval, Unix milliseconds
	Span float64 `json:"span"` // seconds covered

	L1Reads    uint64 `json:"l1_reads"`
	L1Hits     uint64 `json:"l1_hits"`
	L2Reads    uint64 `json:"l2_reads"`
	L2Hits     uint64 `json:"l2_hits"`
	Requests   uint64 `json:"requests"`
	Errors     uint64 `json:"errors"`
	Promotions uint64 `json:"promotions"`
	PromoFail  uint64 `json:"promotions_failed"`
	Conns      int64  `json:"conns"`
	Routed     uint64 `json:"routed"`
	Remote     uint64 `json:"remote"`
	Migrations uint64 `json:"migrations"`
	// InFlight is the migrations in flight at the end of the interval (a
	// coarse point: the most at any second of its span).
	InFlight int64 `json:"migrations_in_flight"`

	HitL1       float64 `json:"hit_l1"`
	HitL2       float64 `json:"hit_l2"`
	HitCombined float64 `json:"hit"`
	RPS         float64 `json:"rps"`
	PPS         float64 `json:"promotions_per_sec"`
	EPS         float64 `json:"errors_per_sec"`
	RemoteShare float64 `json:"remote_fraction"` // remote ÷ routed; -1 without routed requests
	// Latency percentiles in milliseconds, interpolated inside the
	// histogram bucket; 0 when the interval had no request. A coarse point
	// holds the worst second of its span.
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
}

// Config sizes the rings.
type Config struct {
	// Fine is how many per-tick points are kept. Default 3600 (an hour at
	// one second).
	Fine int
	// Fold is how many fine points make one coarse point. Default 60.
	Fold int
	// Coarse is how many folded points are kept. Default 1440 (a day of
	// minutes).
	Coarse int
}

func (c *Config) validate() {
	if c.Fine <= 0 {
		c.Fine = 3600
	}
	if c.Fold <= 0 {
		c.Fold = 60
	}
	if c.Coarse <= 0 {
		c.Coarse = 1440
	}
}

// History is the two rings and the last read they are measured from.
type History struct {
	cfg    Config
	fine   ring
	coarse ring
	// pending are fine points not yet folded, oldest first; at most Fold.
	pending []Point

	prev    Counters
	prevT   time.Time
	started bool
	// total folds every point ever made, evicted ones included: the
	// counts since the first read.
	total Point
}

// New returns an empty history.
func New(cfg Config) *History {
	cfg.validate()
	return &History{cfg: cfg, fine: newRing(cfg.Fine), coarse: newRing(cfg.Coarse)}
}

// Add records the counters read at now. The first call only sets the
// baseline; each later call appends the point between it and the previous
// one. A call whose now is not after the previous one is ignored.
func (h *History) Add(now time.Time, c Counters) {
	if !h.started {
		h.prev, h.prevT, h.started = c, now, true
		return
	}
	if !now.After(h.prevT) {
		return
	}
	p := Derive(h.prev, c, now.Sub(h.prevT))
	p.T = now.UnixMilli()
	h.prev, h.prevT = c, now
	h.total = Fold([]Point{h.total, p})
	h.pending = append(h.pending, p)
	if len(h.pending) == h.cfg.Fold {
		h.coarse.push(Fold(h.pending))
		h.pending = h.pending[:0]
	}
	h.fine.push(p)
}

// Points returns the series oldest first: the coarse points older than
// every fine point, then the fine points.
func (h *History) Points() []Point {
	fine := h.fine.all()
	out := make([]Point, 0, h.coarse.n+len(fine))
	oldest := int64(math.MaxInt64)
	if len(fine) > 0 {
		// A coarse point ends at its last fine point; it may be shown only
		// if all of its span is older than what the fine ring still holds.
		oldest = fine[0].T - int64(fine[0].Span*1000)
	}
	for _, p := range h.coarse.all() {
		if p.T <= oldest {
			out = append(out, p)
		}
	}
	return append(out, fine...)
}

// Since returns the points that end after t (Unix milliseconds), oldest
// first, without copying the older ones: what a client polling with the
// time of the last point it has needs.
func (h *History) Since(t int64) []Point {
	n := 0
	for n < h.fine.n && h.fine.at(h.fine.n-1-n).T > t {
		n++
	}
	if n == h.fine.n {
		// The client has nothing the fine ring holds: give it everything.
		var out []Point
		for _, p := range h.Points() {
			if p.T > t {
				out = append(out, p)
			}
		}
		return out
	}
	out := make([]Point, n)
	for i := range out {
		out[i] = h.fine.at(h.fine.n - n + i)
	}
	return out
}

// Total is every interval since the first read folded into one point (T
// is the end of the last one); zero before the second read.
func (h *History) Total() Point { return h.total }

// Last returns the newest point, if there is one.
func (h *History) Last() (Point, bool) {
	if h.fine.n == 0 {
		return Point{}, false
	}
	return h.fine.at(h.fine.n - 1), true
}

// Derive is the point between two reads dt apart (T is left zero).
func Derive(a, b Counters, dt time.Duration) Point {
	p := Point{
		Span:       dt.Seconds(),
		L1Reads:    delta(a.L1Reads, b.L1Reads),
		L1Hits:     delta(a.L1Hits, b.L1Hits),
		L2Reads:    delta(a.L2Reads, b.L2Reads),
		L2Hits:     delta(a.L2Hits, b.L2Hits),
		Requests:   delta(a.Requests, b.Requests),
		Errors:     delta(a.Errors, b.Errors),
		Promotions: delta(a.Promotions, b.Promotions),
		PromoFail:  delta(a.PromotionsFail, b.PromotionsFail),
		Conns:      b.Conns,
		Routed:     delta(a.LocalityRequests, b.LocalityRequests),
		Remote:     delta(a.LocalityRemote, b.LocalityRemote),
		Migrations: delta(a.Migrations, b.Migrations),
		InFlight:   b.MigrationsInFlight,
	}
	if len(a.LatencyCounts) == len(b.LatencyCounts) && len(b.LatencyBounds) == len(b.LatencyCounts) {
		d := make([]uint64, len(b.LatencyCounts))
		for i := range d {
			d[i] = delta(a.LatencyCounts[i], b.LatencyCounts[i])
		}
		p.P50 = Percentile(b.LatencyBounds, d, 0.50) * 1000
		p.P90 = Percentile(b.LatencyBounds, d, 0.90) * 1000
		p.P99 = Percentile(b.LatencyBounds, d, 0.99) * 1000
	}
	p.derive()
	return p
}

// derive fills the ratios and rates from the counts and the span.
func (p *Point) derive() {
	p.HitL1, p.HitL2, p.HitCombined = ratio(p.L1Hits, p.L1Reads), ratio(p.L2Hits, p.L2Reads), -1
	p.RemoteShare = ratio(p.Remote, p.Routed)
	switch {
	case p.L1Reads > 0:
		// Every cacheable read meets L1 first; an L2 hit serves one L1 miss.
		p.HitCombined = ratio(p.L1Hits+p.L2Hits, p.L1Reads)
	case p.L2Reads > 0:
		p.HitCombined = p.HitL2
	}
	if p.Span > 0 {
		p.RPS = float64(p.Requests) / p.Span
		p.PPS = float64(p.Promotions) / p.Span
		p.EPS = float64(p.Errors) / p.Span
	}
}

// Fold merges consecutive points into one: counts add up, the span is the
// sum, connections and percentiles take the worst (largest) value.
func Fold(ps []Point) Point {
	var out Point
	for _, p := range ps {
		out.T = p.T
		out.Span += p.Span
		out.L1Reads += p.L1Reads
		out.L1Hits += p.L1Hits
		out.L2Reads += p.L2Reads
		out.L2Hits += p.L2Hits
		out.Requests += p.Requests
		out.Errors += p.Errors
		out.Promotions += p.Promotions
		out.PromoFail += p.PromoFail
		out.Routed += p.Routed
		out.Remote += p.Remote
		out.Migrations += p.Migrations
		out.Conns = max(out.Conns, p.Conns)
		out.InFlight = max(out.InFlight, p.InFlight)
		out.P50 = max(out.P50, p.P50)
		out.P90 = max(out.P90, p.P90)
		out.P99 = max(out.P99, p.P99)
	}
	out.derive()
	return out
}

// Percentile returns the q-quantile of a cumulative histogram in the
// bounds' unit, interpolating linearly inside the bucket that holds it
// (from the previous bound, or 0). Requests above the last bound count as
// at the last bound. An empty histogram gives 0.
func Percentile(bounds []float64, cum []uint64, q float64) float64 {
	n := len(cum)
	if n == 0 || n != len(bounds) {
		return 0
	}
	total := cum[n-1]
	if total == 0 {
		return 0
	}
	rank := q * float64(total)
	lo, below := 0.0, uint64(0)
	for i, c := range cum {
		if float64(c) >= rank && c > below {
			frac := (rank - float64(below)) / float64(c-below)
			return lo + frac*(bounds[i]-lo)
		}
		lo, below = bounds[i], c
	}
	return bounds[n-1]
}

func delta(a, b uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

func ratio(num, den uint64) float64 {
	if den == 0 {
		return -1
	}
	return float64(num) / float64(den)
}

// ring is a fixed-capacity circular buffer of points, oldest first.
type ring struct {
	buf  []Point
	head int // index of the oldest point
	n    int
}

func newRing(capacity int) ring { return ring{buf: make([]Point, capacity)} }

func (r *ring) push(p Point) {
	if r.n < len(r.buf) {
		r.buf[(r.head+r.n)%len(r.buf)] = p
		r.n++
		return
	}
	r.buf[r.head] = p
	r.head = (r.head + 1) % len(r.buf)
}

func (r *ring) at(i int) Point { return r.buf[(r.head+i)%len(r.buf)] }

func (r *ring) all() []Point {
	out := make([]Point, r.n)
	for i := range out {
		out[i] = r.at(i)
	}
	return out
}
