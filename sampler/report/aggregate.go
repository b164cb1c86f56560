package report

import (
	"github.com/strata-cache/strata/sampler/family"
	"github.com/strata-cache/strata/sampler/model"
	"github.com/strata-cache/strata/sampler/samplelog"
)

// Options shape a report.
type Options struct {
	// Since and Until bound the records counted: Since < Time ≤ Until, in
	// Unix nanoseconds. Zero means unbounded on that side.
	Since, Until int64
	// Window is how the window is named in the report ("1h", "all").
	Window string
	// Budget is the L1 budget per family and cluster; zero means
	// DefaultBudget.
	Budget Budget
	// Thresholds are the candidate N; nil means model.Thresholds.
	Thresholds []int
}

// clusterID identifies a cluster across regions.
type clusterID struct{ region, cluster string }

// keyState is everything the report needs to remember about one sampled
// key. Fields chosen "newest" compare record times, larger value on a tie,
// so the result does not depend on the order records arrive in.
type keyState struct {
	family   string
	famTime  int64
	keySize  int
	valSize  int
	valTime  int64
	rate     uint64
	rateTime int64
	per      []keyCluster // one entry per cluster that accessed the key
}

type keyCluster struct {
	cluster    int32
	accesses   uint32
	reads      uint32
	l1, l2     uint32
	promotions uint32
}

// Aggregator accumulates entries. It is not safe for concurrent use.
type Aggregator struct {
	opts     Options
	clusters map[clusterID]int32
	cluster  []clusterID
	keys     map[string]*keyState
	families map[string]string // interned family names
	rates    map[uint64]int64  // records per sample rate
	records  int64
	skipped  int64
	oldest   int64
	newest   int64
	last     clusterID // cache for the common run of one cluster's records
	lastIdx  int32
	normBuf  []byte
}

// NewAggregator returns an empty aggregator.
func NewAggregator(opts Options) *Aggregator {
	if opts.Thresholds == nil {
		opts.Thresholds = model.Thresholds
	}
	if opts.Budget == (Budget{}) {
		opts.Budget = DefaultBudget
	}
	return &Aggregator{
		opts:     opts,
		clusters: map[clusterID]int32{},
		keys:     map[string]*keyState{},
		families: map[string]string{},
		rates:    map[uint64]int64{},
		lastIdx:  -1,
	}
}

// Skipped adds n to the count of input lines that could not be used.
func (a *Aggregator) Skipped(n int64) { a.skipped += n }

// Add counts e if it falls in the window. The aggregator keeps e's strings,
// not e.
func (a *Aggregator) Add(e *samplelog.Entry) {
	if (a.opts.Since != 0 && e.Time <= a.opts.Since) || (a.opts.Until != 0 && e.Time > a.opts.Until) {
		return
	}
	rate := e.SampleRate
	if rate == 0 {
		rate = 1
	}
	a.records++
	a.rates[rate]++
	if a.records == 1 || e.Time < a.oldest {
		a.oldest = e.Time
	}
	if a.records == 1 || e.Time > a.newest {
		a.newest = e.Time
	}

	ci := a.clusterIndex(clusterID{e.Region, e.Cluster})
	k := a.keys[e.Key]
	if k == nil {
		k = &keyState{famTime: e.Time, rateTime: e.Time, rate: rate, family: a.familyOf(e)}
		a.keys[e.Key] = k
	} else {
		if e.Time >= k.famTime {
			if f := a.familyOf(e); e.Time > k.famTime || f > k.family {
				k.family = f
			}
			k.famTime = e.Time
		}
		if e.Time > k.rateTime || (e.Time == k.rateTime && rate > k.rate) {
			k.rate, k.rateTime = rate, e.Time
		}
	}
	k.keySize = max(k.keySize, e.KeySize)
	if e.ValueSize > 0 && (k.valSize == 0 || e.Time > k.valTime || (e.Time == k.valTime && e.ValueSize > k.valSize)) {
		k.valSize, k.valTime = e.ValueSize, e.Time
	}

	var kc *keyCluster
	for i := range k.per {
		if k.per[i].cluster == ci {
			kc = &k.per[i]
			break
		}
	}
	if kc == nil {
		k.per = append(k.per, keyCluster{cluster: ci})
		kc = &k.per[len(k.per)-1]
	}
	kc.accesses++
	if e.Op == samplelog.OpGet {
		kc.reads++
		switch e.Level {
		case 1:
			kc.l1++
		case 2:
			kc.l2++
		}
	}
	if e.Promoted {
		kc.promotions++
	}
}

func (a *Aggregator) clusterIndex(id clusterID) int32 {
	if a.lastIdx >= 0 && id == a.last {
		return a.lastIdx
	}
	i, ok := a.clusters[id]
	if !ok {
		i = int32(len(a.cluster))
		a.clusters[id] = i
		a.cluster = append(a.cluster, id)
	}
	a.last, a.lastIdx = id, i
	return i
}

// familyOf returns e's family, normalising the key when the record has
// none, interned so that keys share one string per family.
func (a *Aggregator) familyOf(e *samplelog.Entry) string {
	f := e.Family
	if f == "" {
		a.normBuf = family.AppendDefault(a.normBuf[:0], []byte(e.Key))
		if s, ok := a.families[string(a.normBuf)]; ok {
			return s
		}
		f = string(a.normBuf)
	}
	if s, ok := a.families[f]; ok {
		return s
	}
	a.families[f] = f
	return f
}
