package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/strata-cache/strata/sampler/model"
	"github.com/strata-cache/strata/tiers/promote"
)

// famAcc accumulates one family (or all keys) while Report walks the keys.
// Counts are scaled by key weight unless named sampled.
type famAcc struct {
	name                                string
	thresholds                          []int
	sampledAcc, sampledKeys             int64
	accesses, reads, l1, l2, promotions uint64
	uniq, regionWSS, readPairs          uint64

	// Per cluster index.
	clWSS, clKeys, clAcc  []uint64
	clReads, clL1s, clL2s []uint64

	hot                   []hotKey    // one per sampled key
	pairs                 []l2Pair    // one per (cluster, key) with L2 hits
	footprint             [][]float64 // [threshold][cluster] predicted L1 bytes
	l1hits, promotedPairs []float64   // [threshold]
}

type hotKey struct {
	accesses uint64
	weight   uint64
}

type l2Pair struct {
	l2       uint32
	weight   uint64
	promoted bool
}

func newFamAcc(name string, clusters int, thresholds []int) *famAcc {
	f := &famAcc{
		name: name, thresholds: thresholds,
		clWSS: make([]uint64, clusters), clKeys: make([]uint64, clusters), clAcc: make([]uint64, clusters),
		clReads: make([]uint64, clusters), clL1s: make([]uint64, clusters), clL2s: make([]uint64, clusters),
		footprint: make([][]float64, len(thresholds)),
		l1hits:    make([]float64, len(thresholds)), promotedPairs: make([]float64, len(thresholds)),
	}
	for i := range f.footprint {
		f.footprint[i] = make([]float64, clusters)
	}
	return f
}

func (f *famAcc) add(k *keyState) {
	w := k.rate
	size := uint64(k.keySize + k.valSize)
	f.sampledKeys++
	f.uniq += w
	f.regionWSS += w * size
	var total uint64
	for _, kc := range k.per {
		c := kc.cluster
		f.clWSS[c] += w * size
		f.clKeys[c] += w
		f.clAcc[c] += w * uint64(kc.accesses)
		f.clReads[c] += w * uint64(kc.reads)
		f.clL1s[c] += w * uint64(kc.l1)
		f.clL2s[c] += w * uint64(kc.l2)
		f.accesses += w * uint64(kc.accesses)
		f.reads += w * uint64(kc.reads)
		f.l1 += w * uint64(kc.l1)
		f.l2 += w * uint64(kc.l2)
		f.promotions += w * uint64(kc.promotions)
		f.sampledAcc += int64(kc.accesses)
		total += uint64(kc.accesses)
		if kc.l2 > 0 {
			f.pairs = append(f.pairs, l2Pair{l2: kc.l2, weight: w, promoted: kc.promotions > 0})
		}
		if kc.reads > 0 {
			f.readPairs += w
			r := int(kc.reads)
			for ti, n := range f.thresholds {
				p := promote.Probability(uint32(n), r)
				f.footprint[ti][c] += float64(w*size) * p
				f.l1hits[ti] += float64(w) * model.ExpectedL1Hits(n, r)
				f.promotedPairs[ti] += float64(w) * p
			}
		}
	}
	f.hot = append(f.hot, hotKey{accesses: total, weight: w})
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func hitRatio(reads, l1, l2 uint64) HitRatio {
	h1 := ratio(float64(l1), float64(reads))
	h2 := ratio(float64(l2), float64(reads-l1))
	return HitRatio{L1: h1, L2: h2, Combined: h1 + (1-h1)*h2}
}

func (f *famAcc) finish(names []string, budget Budget) Family {
	out := Family{
		Family: f.name, Accesses: f.accesses, Reads: f.reads, UniqueKeys: f.uniq,
		SampledAccesses: f.sampledAcc, SampledKeys: f.sampledKeys, RegionWSSBytes: f.regionWSS,
		ClusterWSSBytes: map[string]uint64{}, ClusterUniqueKeys: map[string]uint64{},
		HitRatio: hitRatio(f.reads, f.l1, f.l2),
	}
	var sumWSS uint64
	for c, name := range names {
		if f.clKeys[c] == 0 {
			continue
		}
		out.ClusterWSSBytes[name] = f.clWSS[c]
		out.ClusterUniqueKeys[name] = f.clKeys[c]
		sumWSS += f.clWSS[c]
	}
	out.DuplicationFactor = ratio(float64(sumWSS), float64(f.regionWSS))
	out.Hotness, out.Hot10TrafficShare = hotness(f.hot)
	out.Promotion, out.RecommendedThreshold = f.promotion(budget)
	return out
}

// hotness computes the CDF of accesses per key and the traffic share of
// the hottest 10 % of keys.
func hotness(keys []hotKey) (Hotness, float64) {
	var h Hotness
	if len(keys) == 0 {
		return h, 0
	}
	slices.SortFunc(keys, func(a, b hotKey) int { return cmp.Compare(a.accesses, b.accesses) })
	var totalW, totalA float64
	for _, k := range keys {
		totalW += float64(k.weight)
		totalA += float64(k.weight) * float64(k.accesses)
	}
	// Hottest 10 % by weight, from the top.
	var hot float64
	left := 0.1 * totalW
	for i := len(keys) - 1; i >= 0 && left > 0; i-- {
		take := math.Min(float64(keys[i].weight), left)
		hot += take * float64(keys[i].accesses)
		left -= take
	}
	// One point per distinct access count, thinned to at most 100 on a
	// log scale of accesses.
	lo, hi := math.Log(float64(keys[0].accesses)), math.Log(float64(keys[len(keys)-1].accesses))
	bucket := func(a uint64) int {
		if hi == lo {
			return 0
		}
		return int(99 * (math.Log(float64(a)) - lo) / (hi - lo))
	}
	var cumW, cumA float64
	ps := []float64{0.5, 0.9, 0.99}
	pv := []*int64{&h.P50, &h.P90, &h.P99}
	for i, k := range keys {
		cumW += float64(k.weight)
		cumA += float64(k.weight) * float64(k.accesses)
		last := i == len(keys)-1
		if !last && keys[i+1].accesses == k.accesses {
			continue
		}
		share := cumW / totalW
		for j, p := range ps {
			if *pv[j] == 0 && share >= p-1e-12 {
				*pv[j] = int64(k.accesses)
			}
		}
		if last || bucket(keys[i+1].accesses) != bucket(k.accesses) {
			h.CDF = append(h.CDF, CDFPoint{Accesses: int64(k.accesses), KeyShare: share, TrafficShare: ratio(cumA, totalA)})
		}
	}
	h.Max = int64(keys[len(keys)-1].accesses)
	return h, ratio(hot, totalA)
}

func (f *famAcc) promotion(budget Budget) (Promotion, int) {
	p := Promotion{L2Hits: f.l2, Promotions: f.promotions, BudgetBytes: budget.bytesFor(f.regionWSS)}
	p.ObservedRate = ratio(float64(f.promotions), float64(f.l2))
	if p.ObservedRate > 0 {
		p.ImpliedThreshold = int(math.Round(1 / p.ObservedRate))
	}
	var pairW, promotedW, modelW float64
	for _, pr := range f.pairs {
		w := float64(pr.weight)
		pairW += w
		if pr.promoted {
			promotedW += w
		}
		modelW += w * promote.ProbabilityRate(p.ObservedRate, int(pr.l2))
	}
	p.ObservedPromotedKeyShare = ratio(promotedW, pairW)
	p.ModelPromotedKeyShare = ratio(modelW, pairW)

	best := -1
	for ti, n := range f.thresholds {
		pr := Prediction{Threshold: n, L1Hits: f.l1hits[ti], PromotedKeyShare: ratio(f.promotedPairs[ti], float64(f.readPairs))}
		var maxFP, totalFP float64
		for _, fp := range f.footprint[ti] {
			maxFP = math.Max(maxFP, fp)
			totalFP += fp
		}
		pr.L1FootprintBytes = uint64(math.Round(maxFP))
		pr.L1FootprintTotalBytes = uint64(math.Round(totalFP))
		pr.L1TrafficShare = ratio(pr.L1Hits, float64(f.reads))
		p.Predictions = append(p.Predictions, pr)
		if pr.L1FootprintBytes <= p.BudgetBytes && (best < 0 || pr.L1Hits > p.Predictions[best].L1Hits ||
			(pr.L1Hits == p.Predictions[best].L1Hits && n > p.Predictions[best].Threshold)) {
			best = ti
		}
	}
	if f.reads == 0 || len(f.thresholds) == 0 {
		return p, 0
	}
	if best < 0 {
		p.OverBudget = true
		return p, slices.Max(f.thresholds)
	}
	return p, f.thresholds[best]
}

// Report computes the report of everything added so far.
func (a *Aggregator) Report() *Report {
	r := &Report{
		Window:         a.opts.Window,
		Records:        a.records,
		SkippedLines:   a.skipped,
		Budget:         a.opts.Budget.String(),
		PromotionModel: model.Table(model.Thresholds, model.MaxTrials),
		Clusters:       []Cluster{},
		Families:       []Family{},
	}
	if r.Window == "" {
		r.Window = "all"
	}
	if a.records > 0 {
		start, end := a.oldest, a.newest
		if a.opts.Since != 0 {
			start = a.opts.Since
		}
		if a.opts.Until != 0 {
			end = a.opts.Until
		}
		r.WindowStart, r.WindowEnd = time.Unix(0, start).UTC(), time.Unix(0, end).UTC()
	}
	var most int64
	for rate, n := range a.rates {
		if n > most || (n == most && rate > r.SampleRate) {
			r.SampleRate, most = rate, n
		}
	}
	if len(a.rates) > 1 {
		r.MixedSampleRates = true
		r.Warnings = append(r.Warnings, fmt.Sprintf("records carry %d different sample rates; each key is weighted by the rate of its newest record", len(a.rates)))
	}
	regions := map[string]bool{}
	for _, id := range a.cluster {
		regions[id.region] = true
	}
	names := make([]string, len(a.cluster))
	for i, id := range a.cluster {
		names[i] = id.cluster
		if len(regions) > 1 {
			names[i] = id.region + "/" + id.cluster
		}
	}
	if len(regions) > 1 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("records come from %d regions; the region working set is their union", len(regions)))
	}

	// Walk keys in a fixed order so float sums are reproducible.
	keys := make([]string, 0, len(a.keys))
	for k := range a.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	overall := newFamAcc("*", len(a.cluster), a.opts.Thresholds)
	fams := map[string]*famAcc{}
	for _, key := range keys {
		k := a.keys[key]
		f := fams[k.family]
		if f == nil {
			f = newFamAcc(k.family, len(a.cluster), a.opts.Thresholds)
			fams[k.family] = f
		}
		f.add(k)
		overall.add(k)
	}
	r.Overall = overall.finish(names, a.opts.Budget)
	for _, f := range fams {
		r.Families = append(r.Families, f.finish(names, a.opts.Budget))
	}
	slices.SortFunc(r.Families, func(x, y Family) int {
		if c := cmp.Compare(y.Accesses, x.Accesses); c != 0 {
			return c
		}
		return cmp.Compare(x.Family, y.Family)
	})
	order := make([]int, len(a.cluster))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(names[x], names[y]) })
	for _, c := range order {
		r.Clusters = append(r.Clusters, Cluster{
			Name: names[c], Cluster: a.cluster[c].cluster, Region: a.cluster[c].region,
			Accesses: overall.clAcc[c], UniqueKeys: overall.clKeys[c], WSSBytes: overall.clWSS[c],
			HitRatio: hitRatio(overall.clReads[c], overall.clL1s[c], overall.clL2s[c]),
		})
	}
	return r
}
