package locality

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement"
)

// SimConfig is one run of the simulation (`strata bench locality
// --simulate`): no process, no data plane, virtual time. Zero fields
// take the defaults named.
type SimConfig struct {
	// MuShards (default 1,000,000), spread over three regions by id.
	MuShards int
	// Days simulated (default 7).
	Days int
	// Interval is the counter interval, virtual (default 15m): every
	// region's Tally is collected and shipped to the leader once per
	// interval. Requests are drawn per μ-shard and interval, so a shorter
	// one costs more wall time; the fleet's 1s makes the leader react
	// sooner than simulated here.
	Interval time.Duration
	// Rounds of the leader per interval (default 3).
	Rounds int
	// PerMinute is each μ-shard's requests per minute (default 1).
	PerMinute float64
	// Foreign is the fraction of requests that read a random μ-shard
	// from a random region (default 0.02).
	Foreign float64
	// ForeignFills is the fraction of foreign reads that miss and are
	// followed by the reader's read-through fill, a second access from
	// the same region in the same interval (default 0; the bench's day
	// misses about half of them, its values living only max_ttl).
	ForeignFills float64
	// Followers is the fraction of users served every day from the next
	// region during its eight peak hours (default 0.1): the diurnal
	// shift. Travellers is the fraction of users away a whole day, in
	// one of the other regions (default 0.02).
	Followers, Travellers float64
	// RequestBytes is the data traffic of one request, the measure of
	// the counters' share (default 500: a 400-byte value, its key and
	// the protocol around them, as in the bench's day).
	RequestBytes int
	// Policy is the placement policy; by default the fleet's defaults
	// with MaxTTL 6h.
	Policy placement.LocalityPolicy
	Seed   uint64
	// CPU is the process's CPU time so far, which the leader's share is
	// measured with (default: none, and the leader's wall time is
	// reported instead).
	CPU func() time.Duration
	// Log receives a progress line a simulated day (default: discarded).
	Log io.Writer
}

// SimReport is what the simulation measured.
type SimReport struct {
	MuShards  int     `json:"mushards"`
	Days      int     `json:"days"`
	Interval  string  `json:"counter_interval"`
	PerMinute float64 `json:"requests_per_mushard_per_minute"`
	Requests  uint64  `json:"requests"`
	// RemoteFraction: requests served by another region than their
	// client's, over the whole run and after its first day.
	RemoteFraction         float64 `json:"remote_fraction"`
	RemoteFractionAfterDay float64 `json:"remote_fraction_after_day1"`
	Moves                  uint64  `json:"moves"`
	MovesPerMuShard        float64 `json:"moves_per_mushard"`
	// Returns: moves back to a region left less than min_interval +
	// max_ttl before (thrash).
	Returns     uint64 `json:"returns"`
	RateLimited uint64 `json:"rate_limited"`
	Decisions   uint64 `json:"decisions"`
	// CounterBytes: the rows the regions would write (key and value);
	// CounterFraction their share of RequestBytes × Requests.
	CounterBytes    uint64  `json:"counter_bytes"`
	CounterFraction float64 `json:"counter_fraction"`
	// LeaderMicrosPerDecision: the leader's CPU time (merging counters
	// and its rounds, on one goroutine; the process's CPU while it runs,
	// so the garbage collector's share is in) over its decisions.
	LeaderMicrosPerDecision float64 `json:"leader_us_per_decision"`
	LeaderSeconds           float64 `json:"leader_seconds"`
	// HeapBytesPerMuShard: the heap in use at the end, after a GC (the
	// leader, its in-memory store holding the location table, the
	// regions' tallies) over MuShards.
	HeapBytesPerMuShard float64 `json:"heap_bytes_per_mushard"`
	TallyEntries        int     `json:"tally_entries"`
	WallSeconds         float64 `json:"wall_seconds"`
}

func (c *SimConfig) validate() error {
	if c.MuShards == 0 {
		c.MuShards = 1_000_000
	}
	if c.Days == 0 {
		c.Days = 7
	}
	if c.Interval == 0 {
		c.Interval = 15 * time.Minute
	}
	if c.Rounds == 0 {
		c.Rounds = 3
	}
	if c.PerMinute == 0 {
		c.PerMinute = 1
	}
	if c.Foreign == 0 {
		c.Foreign = 0.02
	}
	if c.Followers == 0 {
		c.Followers = 0.1
	}
	if c.Travellers == 0 {
		c.Travellers = 0.02
	}
	if c.RequestBytes == 0 {
		c.RequestBytes = 500
	}
	if c.Policy == (placement.LocalityPolicy{}) {
		c.Policy = placement.DefaultLocalityPolicy()
		c.Policy.MaxTTL = 6 * time.Hour
		// The fleet's leader runs a round every 100ms; the simulation's
		// rounds are Interval/Rounds apart, so a bucket as deep as the
		// default burst would cap a pair at Burst moves a round, not at
		// Rate a second. Its depth is one round's tokens instead.
		c.Policy.Burst = max(c.Policy.Burst, c.Policy.Rate*(c.Interval/time.Duration(c.Rounds)).Seconds())
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.CPU == nil {
		began := time.Now()
		c.CPU = func() time.Duration { return time.Since(began) }
	}
	switch {
	case c.MuShards < 3 || c.Days < 1 || c.Rounds < 1 || c.RequestBytes < 1:
		return bad("simulation: at least 3 μ-shards, 1 day, 1 round and 1 request byte")
	case c.Interval < time.Second || c.Interval > 24*time.Hour:
		return bad("simulation interval %v: 1s to 24h", c.Interval)
	case c.PerMinute <= 0 || c.Foreign < 0 || c.Foreign >= 1 || c.ForeignFills < 0 || c.ForeignFills > 1 || c.Followers < 0 || c.Followers > 1 ||
		c.Travellers < 0 || c.Travellers > 1:
		return bad("simulation: rate positive, foreign in [0,1), foreign fills, followers and travellers in [0,1]")
	}
	return nil
}

// simRegions are the simulated regions; a μ-shard's home is its id mod 3.
var simRegions = []string{"a", "b", "c"}

// Simulate runs the placement leader (placesvc.Leader, on an in-memory
// store) and each region's counters (locsvc.Tally, encoded as shipped)
// over cfg.Days of virtual time. The workload is simWorld's.
func Simulate(ctx context.Context, cfg SimConfig) (*SimReport, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	t0 := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	m := store.NewMemory(store.MemoryOptions{History: 1}) // nothing watches it
	c := m.Connect()
	defer func() { _ = c.Close() }()
	sess, err := c.NewSession(ctx, 60)
	if err != nil {
		return nil, err
	}
	l, err := c.Campaign(ctx, sess, locsvc.ElectionName, "simulation")
	if err != nil {
		return nil, err
	}
	ld, err := placesvc.NewLeader(placesvc.Config{Policy: cfg.Policy, Regions: simRegions, Seed: cfg.Seed}, c, l)
	if err != nil {
		return nil, err
	}
	if _, err := ld.Recover(ctx, t0); err != nil {
		return nil, err
	}
	w := newSimWorld(&cfg)
	for u := range w.owner {
		if _, err := ld.Create(ctx, w.names[u], simRegions[w.owner[u]], t0); err != nil {
			return nil, fmt.Errorf("simulation: create %s: %w", w.names[u], err)
		}
	}
	regions := make([]*simRegion, len(simRegions))
	for r := range regions {
		regions[r] = &simRegion{name: simRegions[r], tally: locsvc.NewTally(cfg.Policy.HalfLife, locsvc.DefaultLocalEvery)}
	}
	rep := &SimReport{MuShards: cfg.MuShards, Days: cfg.Days, Interval: cfg.Interval.String(), PerMinute: cfg.PerMinute}
	var leader time.Duration
	var rev int64
	var remote, requests, remoteLater, requestsLater uint64
	steps := int(time.Duration(cfg.Days) * 24 * time.Hour / cfg.Interval)
	for i := range steps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		now := t0.Add(time.Duration(i+1) * cfg.Interval)
		n, rem := w.interval(now.Add(-cfg.Interval), regions)
		requests, remote = requests+n, remote+rem
		if now.Sub(t0) > 24*time.Hour {
			requestsLater, remoteLater = requestsLater+n, remoteLater+rem
		}
		if err := w.ship(regions, now); err != nil {
			return nil, err
		}
		for _, g := range regions { // the leader alone, in region order
			rep.CounterBytes += g.bytes
			for _, b := range g.batches {
				rev++
				began := cfg.CPU()
				ld.Counts(g.key(), rev, b, now)
				leader += cfg.CPU() - began
			}
		}
		for k := range cfg.Rounds {
			at := now.Add(time.Duration(k) * cfg.Interval / time.Duration(cfg.Rounds))
			began := cfg.CPU()
			evs, err := ld.Round(ctx, at)
			leader += cfg.CPU() - began
			if err != nil {
				return nil, err
			}
			for _, ev := range evs {
				if ev.Kind == "migrating" { // the destination serves from now on
					w.move(ev.Name, ev.To)
					rep.Moves++
				}
			}
		}
		if (i+1)%int(24*time.Hour/cfg.Interval) == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			fmt.Fprintf(cfg.Log, "locality simulation: day %d: remote %.2f %% (after day 1 %.2f %%), %d moves (%d returns), counters %.3f %% of data, leader %.1f s CPU for %d decisions, heap %.0f bytes a μ-shard, %.0f s\n",
				int(now.Sub(t0)/(24*time.Hour)), 100*ratio(float64(remote), float64(requests)), 100*ratio(float64(remoteLater), float64(requestsLater)),
				rep.Moves, ld.Returns(), 100*ratio(float64(rep.CounterBytes), float64(requests)*float64(cfg.RequestBytes)),
				leader.Seconds(), ld.Decided(), float64(ms.HeapInuse)/float64(cfg.MuShards), time.Since(start).Seconds())
		}
	}
	rep.Requests = requests
	rep.RemoteFraction = ratio(float64(remote), float64(requests))
	rep.RemoteFractionAfterDay = ratio(float64(remoteLater), float64(requestsLater))
	rep.MovesPerMuShard = float64(rep.Moves) / float64(cfg.MuShards)
	rep.Returns, rep.RateLimited, rep.Decisions = ld.Returns(), ld.RateLimited(), ld.Decided()
	rep.CounterFraction = ratio(float64(rep.CounterBytes), float64(requests)*float64(cfg.RequestBytes))
	rep.LeaderSeconds = leader.Seconds()
	rep.LeaderMicrosPerDecision = ratio(float64(leader.Microseconds()), float64(rep.Decisions))
	for _, g := range regions {
		rep.TallyEntries += g.tally.Len()
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.HeapBytesPerMuShard = float64(ms.HeapInuse) / float64(cfg.MuShards)
	runtime.KeepAlive(w)
	runtime.KeepAlive(ld)
	runtime.KeepAlive(regions)
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// simWorld is the simulation's workload and the owners as the fleet sees
// them. Users are μ-shards: user u lives in region u mod 3.
type simWorld struct {
	cfg   *SimConfig
	rng   *rand.Rand
	names []string
	owner []uint8 // the serving region of each μ-shard
	index map[string]int32
}

func newSimWorld(cfg *SimConfig) *simWorld {
	w := &simWorld{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x73696d)),
		names: make([]string, cfg.MuShards), owner: make([]uint8, cfg.MuShards), index: make(map[string]int32, cfg.MuShards)}
	for u := range w.names {
		w.names[u] = "u: " + strconv.Itoa(u)
		w.owner[u] = uint8(u % len(simRegions))
		w.index[w.names[u]] = int32(u)
	}
	return w
}

func (w *simWorld) move(name, to string) {
	for r, n := range simRegions {
		if n == to {
			w.owner[w.index[name]] = uint8(r)
		}
	}
}

// mix hashes u and salt to a uniform fraction in [0,1).
func mix(u, salt uint64) float64 {
	x := u*0x9e3779b97f4a7c15 ^ salt*0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return float64(x>>11) / (1 << 53)
}

// where is the region user u is served from at t: a follower is served
// from the next region during that region's eight peak hours (region r
// peaks from 8r h to 8r+8 h UTC); a traveller is away all day, in one
// of the other two regions.
func (w *simWorld) where(u int, t time.Time) int {
	n := len(simRegions)
	home := u % n
	day := uint64(t.Unix() / 86400)
	if f := mix(uint64(u), day+1); f < w.cfg.Travellers {
		return (home + 1 + int(f/w.cfg.Travellers*2)) % n
	}
	if mix(uint64(u), 0) < w.cfg.Followers {
		next := (home + 1) % n
		if h := t.Hour(); h >= 8*next && h < 8*next+8 {
			return next
		}
	}
	return home
}

// WriteJSON writes the report as one JSON object.
func (r *SimReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for people.
func (r *SimReport) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "μ-shards\t%d over %d days, counter interval %s, %.0f request a μ-shard a minute\n", r.MuShards, r.Days, r.Interval, r.PerMinute)
	fmt.Fprintf(tw, "remote accesses\t%.2f %% (after the first day %.2f %%)\n", 100*r.RemoteFraction, 100*r.RemoteFractionAfterDay)
	fmt.Fprintf(tw, "moves\t%d (%.3f a μ-shard; %d back within min_interval + max_ttl; %d held by the rate cap)\n", r.Moves, r.MovesPerMuShard, r.Returns, r.RateLimited)
	fmt.Fprintf(tw, "counter bytes\t%d (%.3f %% of the data traffic)\n", r.CounterBytes, 100*r.CounterFraction)
	fmt.Fprintf(tw, "leader\t%.1f µs a decision (%d decisions, %.1f s)\n", r.LeaderMicrosPerDecision, r.Decisions, r.LeaderSeconds)
	fmt.Fprintf(tw, "memory\t%.0f heap bytes a μ-shard; %d tally entries held\n", r.HeapBytesPerMuShard, r.TallyEntries)
	fmt.Fprintf(tw, "wall time\t%.1f s\n", r.WallSeconds)
	return tw.Flush()
}
