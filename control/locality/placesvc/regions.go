package placesvc

import (
	"context"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
)

// RegionsEvery is a sensible reuse window for RegionView: one answer
// reads the whole location table, and the operator's page asks every
// second.
const RegionsEvery = 5 * time.Second

// RegionView answers GET /admin/v1/locality/regions from the store, in
// any strata: by region, the accesses of its clients, how many of them
// another region served, the μ-shards it owns, and its cache memory as
// its strata report it (judged as the placement service judges it, with
// View.WithCapacity's ceiling). The accesses are the
// ones View.MuShard shows (the leader's decayed counts while this process
// leads, else the members' last counter batches); an access is remote
// when its region is not the μ-shard's serving region in the table now
// (Source while in Prepare, else Owner). That is exact at steady state;
// for about a half-life after a move the counts from before it are
// judged by the new owner.
//
// It starts no goroutine. Concurrent calls share one computation.
type RegionView struct {
	v     *View
	self  string
	every time.Duration

	mu   sync.Mutex // guards at and last; held while computing
	at   time.Time  // when last was computed (v.now); zero: never
	last admin.Regions
}

var _ admin.RegionView = (*RegionView)(nil)

// RegionView returns the regions view of v for a strata of region self.
// An answer is reused for every (0: never), on v's clock.
func (v *View) RegionView(self string, every time.Duration) *RegionView {
	return &RegionView{v: v, self: self, every: every}
}

// Regions implements admin.RegionView.
func (rv *RegionView) Regions(ctx context.Context) (admin.Regions, error) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	now := rv.v.now()
	if !rv.at.IsZero() && !now.Before(rv.at) && now.Sub(rv.at) < rv.every {
		return copyRegions(rv.last), nil
	}
	rows, _, err := rv.v.st.List(ctx, rv.v.table.RowsPrefix())
	if err != nil {
		return admin.Regions{}, err
	}
	table := make(map[string]loctable.Entry, len(rows))
	for _, row := range rows {
		name, ok := rv.v.table.Name(row.Key)
		if !ok {
			continue
		}
		e, err := loctable.Decode(row.Value)
		if err != nil {
			continue // a row the location service refuses too
		}
		table[name] = e
	}
	counts, err := rv.v.allCounters(ctx, now)
	if err != nil {
		return admin.Regions{}, err
	}
	caps, err := rv.v.capacities(ctx, now)
	if err != nil {
		return admin.Regions{}, err
	}
	rv.last = admin.Regions{Self: rv.self, Regions: withCapacity(regionTotals(rv.v.regions, table, counts), caps)}
	rv.at = now
	return copyRegions(rv.last), nil
}

func copyRegions(rs admin.Regions) admin.Regions {
	rs.Regions = append([]admin.RegionLocality(nil), rs.Regions...)
	return rs
}

// capacities judges the members' capacity rows as the placement
// service does (a row that does not decode is left out, as there).
func (v *View) capacities(ctx context.Context, now time.Time) ([]RegionCapacity, error) {
	rows, _, err := v.st.List(ctx, v.layout.CapacityPrefix())
	if err != nil {
		return nil, err
	}
	reports := make([]locsvc.Capacity, 0, len(rows))
	for _, row := range rows {
		if c, err := locsvc.DecodeCapacity(row.Value); err == nil {
			reports = append(reports, c)
		}
	}
	return RegionCapacities(v.regions, reports, now, v.maxAge, v.ceiling), nil
}

// withCapacity adds each known region's memory and mark to rs.
func withCapacity(rs []admin.RegionLocality, caps []RegionCapacity) []admin.RegionLocality {
	by := make(map[string]RegionCapacity, len(caps))
	for _, c := range caps {
		if c.Known {
			by[c.Name] = c
		}
	}
	for i := range rs {
		if c, ok := by[rs[i].Region]; ok {
			used, limit, over := c.Used, c.Limit, c.OverCapacity
			rs[i].UsedBytes, rs[i].LimitBytes, rs[i].OverCapacity = &used, &limit, &over
		}
	}
	return rs
}

// allCounters are every μ-shard's accesses by region: the leader's
// decayed counts if this process leads, else the sum of the members'
// last batches (as View.counters for one μ-shard).
func (v *View) allCounters(ctx context.Context, now time.Time) (map[string]map[string]float64, error) {
	if v.runner != nil {
		if ld := v.runner.Leading(); ld != nil {
			return ld.AllCounters(now), nil
		}
	}
	rows, _, err := v.st.List(ctx, v.layout.CountersPrefix())
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	for _, row := range rows {
		b, err := locsvc.DecodeBatch(row.Value)
		if err != nil {
			continue
		}
		for _, c := range b.Counts {
			if out[c.Name] == nil {
				out[c.Name] = map[string]float64{}
			}
			out[c.Name][b.Region] += float64(c.N)
		}
	}
	return out, nil
}

// AllCounters returns every counted μ-shard's decayed accesses by region
// as of now (μ-shards whose counts decayed to nothing may be gone).
func (ld *Leader) AllCounters(now time.Time) map[string]map[string]float64 {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	out := make(map[string]map[string]float64, len(ld.shards))
	for name, sh := range ld.shards {
		m := make(map[string]float64, len(sh.counters))
		for r, d := range sh.counters {
			m[r] = d.Value(now, ld.cfg.Policy.HalfLife)
		}
		out[name] = m
	}
	return out
}

// regionTotals sums counts (μ-shard → region → accesses) by region, an
// access being remote when its region is not the serving region of the
// μ-shard's row; a μ-shard without a row counts its accesses as local
// (served where asked: no rule routes it, or its row is being created).
// The result lists the configured regions and any other region met, by
// name, with the sums rounded to hundredths.
func regionTotals(regions []string, table map[string]loctable.Entry, counts map[string]map[string]float64) []admin.RegionLocality {
	by := map[string]*admin.RegionLocality{}
	get := func(r string) *admin.RegionLocality {
		x := by[r]
		if x == nil {
			x = &admin.RegionLocality{Region: r}
			by[r] = x
		}
		return x
	}
	for _, r := range regions {
		get(r)
	}
	for _, e := range table {
		get(e.Owner).MuShards++
	}
	for name, perRegion := range counts {
		e, known := table[name]
		serving := e.Owner
		if e.State == loctable.Prepare {
			serving = e.Source
		}
		for r, n := range perRegion {
			x := get(r)
			x.Requests += n
			if known && r != serving {
				x.Remote += n
			}
		}
	}
	out := make([]admin.RegionLocality, 0, len(by))
	for _, x := range by {
		x.Requests = math.Round(x.Requests*100) / 100
		x.Remote = math.Round(x.Remote*100) / 100
		out = append(out, *x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Region < out[j].Region })
	return out
}
