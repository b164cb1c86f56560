package locality

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// DelayNote says where the WAN's delay comes from; every output carries it.
const DelayNote = "inter-region delay injected by in-process toxiproxy on every region link (the kernel here has no netem)"

// Result is one placement's figures over its simulated day.
type Result struct {
	Placement string `json:"-"`
	// RemoteFraction is the share of requests served across regions at
	// steady state (from Settle after each shift of the day to the next);
	// RemoteFractionDay over the whole day. Locality placements divide
	// strata's forwarded (and owner-unreachable) requests by the requests
	// the clients sent, read-through fills included; full replication
	// counts the writes, whose deletes in the other regions cross the WAN.
	RemoteFraction    float64 `json:"remote_fraction"`
	RemoteFractionDay float64 `json:"remote_fraction_day"`
	// RemoteByPhase is the remote share in each phase's steady window:
	// before, during and after B's peak.
	RemoteByPhase []float64 `json:"remote_fraction_by_phase"`
	// Latency of the clients' requests over the day, as they saw it (a
	// write under full replication includes its remote deletes).
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	// The same within the steady windows only.
	P50MsSteady float64 `json:"p50_ms_steady"`
	P99MsSteady float64 `json:"p99_ms_steady"`
	// CrossRegionBytes crossed the toxiproxy links, both directions.
	CrossRegionBytes int64 `json:"cross_region_bytes"`
	// MemoryBytesPerRegion is memcached's "bytes" of the regions' L2s at
	// the end of the day, averaged over the regions.
	MemoryBytesPerRegion int64 `json:"memory_bytes_per_region"`
	Requests             int64 `json:"requests"`
	Errors               int64 `json:"errors"`
	Misses               int64 `json:"read_misses"`
	ClientBytes          int64 `json:"client_bytes"`
	// FirstError is the first failed request's error, if any failed.
	FirstError string `json:"first_error,omitempty"`
	// Strata's own counters over the day (strata placement only).
	Migrations             *int64   `json:"migrations,omitempty"`
	LocationCacheHitRatio  *float64 `json:"location_cache_hit_ratio,omitempty"`
	CounterTrafficFraction *float64 `json:"counter_traffic_fraction,omitempty"`
	WrongOwner             *int64   `json:"wrong_owner,omitempty"`
	OwnerUnreachable       *int64   `json:"owner_unreachable,omitempty"`
	// After the day (strata placement only): the location service's
	// state in etcd, and the CPU cost of a forwarded request.
	Etcd        *EtcdState   `json:"etcd,omitempty"`
	ForwardCost *ForwardCost `json:"forward_cost,omitempty"`
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

func ms(us int64) float64 { return float64(us) / 1000 }

// fill computes the figures from the day's tallies and counter deltas.
func (r *Result) fill(t *tally, day sample, win [maxWindows]sample, wanBytes, clientBytes, mem int64, locality bool) {
	r.P50Ms = ms(t.all.ValueAtQuantile(50))
	r.P99Ms = ms(t.all.ValueAtQuantile(99))
	r.P50MsSteady = ms(t.steady.ValueAtQuantile(50))
	r.P99MsSteady = ms(t.steady.ValueAtQuantile(99))
	r.CrossRegionBytes = wanBytes
	r.MemoryBytesPerRegion = mem
	r.Requests, r.Errors, r.Misses, r.ClientBytes = t.requests, t.errors, t.misses, clientBytes
	if t.firstErr != nil {
		r.FirstError = t.firstErr.Error()
	}
	// A locality placement's remote requests are strata's forwards (and
	// owner-unreachable answers) over what the clients sent: strata counts
	// a link request it serves apart from its clients' local ones. Full
	// replication's are its writes, which cross to delete elsewhere.
	remoteIn := func(s sample, clientRemote int64) float64 {
		if locality {
			return s.forwarded + s.unreachable
		}
		return float64(clientRemote)
	}
	var steadyRemote, steadySent float64
	r.RemoteByPhase = make([]float64, maxWindows)
	for i := range win {
		rem := remoteIn(win[i], t.winRemote[i])
		r.RemoteByPhase[i] = min(ratio(rem, float64(t.winSent[i])), 1)
		steadyRemote += rem
		steadySent += float64(t.winSent[i])
	}
	r.RemoteFraction = min(ratio(steadyRemote, steadySent), 1)
	r.RemoteFractionDay = min(ratio(remoteIn(day, t.remote), float64(t.sent)), 1)
	if !locality {
		return
	}
	if r.Placement != Strata {
		return
	}
	mig := int64(day.migrations)
	hit := ratio(day.cacheHit, day.cacheHit+day.cacheMiss)
	counter := ratio(day.counterBytes, float64(clientBytes))
	wrong, unreach := int64(day.wrongOwner), int64(day.unreachable)
	r.Migrations, r.LocationCacheHitRatio, r.CounterTrafficFraction = &mig, &hit, &counter
	r.WrongOwner, r.OwnerUnreachable = &wrong, &unreach
}

// Goal is one of the targets, measured.
type Goal struct {
	Goal   string  `json:"goal"`
	Value  float64 `json:"value"`
	Target float64 `json:"target"`
	Met    bool    `json:"met"`
}

// Report is one run of the bench.
type Report struct {
	Date      time.Time          `json:"date"`
	Note      string             `json:"note"`
	Regions   []string           `json:"regions"`
	OneWayMs  map[string]float64 `json:"one_way_delay_ms"`
	DayS      float64            `json:"day_seconds"`
	SettleS   float64            `json:"settle_seconds"`
	Users     int                `json:"users"`
	Fields    int                `json:"fields_per_user"`
	ValueSize int                `json:"value_bytes"`
	Rate      float64            `json:"rate"`
	ReadRatio float64            `json:"read_ratio"`
	Foreign   float64            `json:"foreign_fraction"`
	Policy    policy             `json:"strata_policy"`
	// FullWrites is what a write does in the other regions under full
	// replication: "delete" (the definition) or "set".
	FullWrites string `json:"full_replication_writes"`
	// Placements by name: static, full_replication, strata.
	Placements map[string]*Result `json:"placements"`
	Goals      []Goal             `json:"goals"`
	order      []string
}

func newReport(cfg *Config) *Report {
	names := cfg.regionNames()
	rep := &Report{
		Date: time.Now().UTC(), Note: DelayNote, Regions: names, OneWayMs: map[string]float64{},
		DayS: cfg.Duration.Seconds(), SettleS: cfg.Settle.Seconds(),
		Users: cfg.Users * len(names), Fields: cfg.Fields, ValueSize: cfg.ValueSize,
		Rate: cfg.Rate, ReadRatio: cfg.ReadRatio, Foreign: cfg.Foreign, Policy: cfg.policy(), FullWrites: cfg.FullWrites,
		Placements: map[string]*Result{},
	}
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			rep.OneWayMs[names[i]+"-"+names[j]] = float64(cfg.oneWay(i, j).Microseconds()) / 1000
		}
	}
	return rep
}

func (rep *Report) add(name string, r *Result) {
	r.Placement = name
	rep.Placements[name] = r
	rep.order = append(rep.order, name)
}

// judge sets the goals that the placements run allow measuring.
func (rep *Report) judge() {
	s, ok := rep.Placements[Strata]
	if !ok {
		return
	}
	rep.Goals = append(rep.Goals, Goal{Goal: "strata: remote accesses at steady state ≤ 5 %", Value: s.RemoteFraction, Target: 0.05, Met: s.RemoteFraction <= 0.05})
	if st, ok := rep.Placements[Static]; ok && st.P50Ms > 0 {
		v := 1 - s.P50Ms/st.P50Ms
		rep.Goals = append(rep.Goals, Goal{Goal: "strata: p50 at least 50 % below static's (1 - strata/static)", Value: v, Target: 0.5, Met: v >= 0.5})
	}
	if f, ok := rep.Placements[Full]; ok && f.MemoryBytesPerRegion > 0 {
		v := float64(s.MemoryBytesPerRegion) / float64(f.MemoryBytesPerRegion)
		rep.Goals = append(rep.Goals, Goal{Goal: "strata: memory per region ≤ 1/2 of full replication's (strata/full)", Value: v, Target: 0.5, Met: v <= 0.5})
	}
	if s.LocationCacheHitRatio != nil {
		v := *s.LocationCacheHitRatio
		rep.Goals = append(rep.Goals, Goal{Goal: "strata: location cache hit ratio ≥ 98 %", Value: v, Target: 0.98, Met: v >= 0.98})
	}
	if s.CounterTrafficFraction != nil {
		v := *s.CounterTrafficFraction
		rep.Goals = append(rep.Goals, Goal{Goal: "strata: counter traffic ≤ 1 % of data traffic", Value: v, Target: 0.01, Met: v <= 0.01})
	}
	if f := s.ForwardCost; f != nil {
		// A local cost lost in the background's noise measures nothing:
		// the goal is then not met, whatever the ratio says.
		rep.Goals = append(rep.Goals, Goal{Goal: "strata: CPU of a forwarded get ≤ 1.2 × a local L2 get's", Value: f.Ratio, Target: 1.2, Met: f.LocalUs > 0 && f.Ratio <= 1.2})
	}
}

// WriteJSON writes the report as one JSON object.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteTable writes the report for people.
func (rep *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "locality bench: 3 regions (%s), %d users, %d fields of %d bytes, %.0f req/s, reads %.0f %%, foreign reads %.0f %%\n",
		strings.Join(rep.Regions, ", "), rep.Users, rep.Fields, rep.ValueSize, rep.Rate, 100*rep.ReadRatio, 100*rep.Foreign)
	var delays []string
	for _, k := range sortedKeys(rep.OneWayMs) {
		delays = append(delays, fmt.Sprintf("%s %.0fms", k, rep.OneWayMs[k]))
	}
	fmt.Fprintf(&b, "one-way delay %s; %s\n", strings.Join(delays, ", "), rep.Note)
	elsewhere := "deleted"
	if rep.FullWrites == "set" {
		elsewhere = "stored"
	}
	fmt.Fprintf(&b, "full replication: a write is stored at home and %s in the other regions through the WAN before it is acknowledged\n", elsewhere)
	fmt.Fprintf(&b, "a %.0fs day per placement: half of a's users served from b during [30 %%, 70 %%); steady state = %.1fs after each shift onwards (by phase: before/during/after the peak)\n",
		rep.DayS, rep.SettleS)
	if _, ok := rep.Placements[Full]; !ok || len(rep.Placements) > 1 {
		p := rep.Policy
		fmt.Fprintf(&b, "locality: migrate_after %s, min_interval %s, max_ttl %s, half_life %s, counter_interval %s, grace %s\n",
			p.MigrateAfter, p.MinInterval, p.MaxTTL, p.HalfLife, p.CounterInterval, p.Grace)
	}
	b.WriteByte('\n')
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "placement\tremote (steady)\tby phase\tremote (day)\tp50 ms\tp99 ms\tcross-region bytes\tL2 bytes/region\trequests\terrors\t")
	for _, name := range rep.order {
		r := rep.Placements[name]
		phases := make([]string, len(r.RemoteByPhase))
		for i, f := range r.RemoteByPhase {
			phases[i] = fmt.Sprintf("%.1f", 100*f)
		}
		fmt.Fprintf(tw, "%s\t%.1f %%\t%s %%\t%.1f %%\t%.2f\t%.2f\t%d\t%d\t%d\t%d\t\n", name, 100*r.RemoteFraction, strings.Join(phases, "/"),
			100*r.RemoteFractionDay, r.P50Ms, r.P99Ms, r.CrossRegionBytes, r.MemoryBytesPerRegion, r.Requests, r.Errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if s, ok := rep.Placements[Strata]; ok && s.Migrations != nil {
		fmt.Fprintf(&b, "\nstrata: %d migrations, location cache hit %.2f %%, counter traffic %.3f %% of data traffic, wrong owner %d, owner unreachable %d\n",
			*s.Migrations, 100*deref(s.LocationCacheHitRatio), 100*deref(s.CounterTrafficFraction), deref(s.WrongOwner), deref(s.OwnerUnreachable))
	}
	if s, ok := rep.Placements[Strata]; ok && s.Etcd != nil {
		e := s.Etcd
		fmt.Fprintf(&b, "etcd: %d μ-shards, %d bytes under the locality prefix (%.0f per μ-shard; about %.3g μ-shards in an 8 GiB backend), database file %d bytes\n",
			e.MuShards, e.Bytes, e.BytesPerMuShard, e.MuShardsAt8GiB, e.DBBytes)
	}
	if s, ok := rep.Placements[Strata]; ok && s.ForwardCost != nil {
		f := s.ForwardCost
		fmt.Fprintf(&b, "CPU at the forwarding strata: %.1f µs per forwarded get, %.1f µs per local L2 get (%.2f×, %d of each, paced at %.0f/s: achieved %.0f local, %.0f forwarded)\n",
			f.ForwardedUs, f.LocalUs, f.Ratio, f.Requests, f.RatePerSec, f.LocalRate, f.ForwardedRate)
	}
	if len(rep.Goals) > 0 {
		b.WriteString("\ngoals:\n")
		for _, g := range rep.Goals {
			mark := "missed"
			if g.Met {
				mark = "met"
			}
			fmt.Fprintf(&b, "  %-70s %8.4f  (target %.2f)  %s\n", g.Goal, g.Value, g.Target, mark)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
