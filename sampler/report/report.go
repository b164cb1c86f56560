package report

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/strata-cache/strata/sampler/model"
)

// Report is the analysis of one window of sampled accesses. Its JSON form is
// stable: fields are only ever added.
type Report struct {
	Window           string    `json:"window"` // "1h", "1d", "7d", "all", or a duration
	WindowStart      time.Time `json:"window_start"`
	WindowEnd        time.Time `json:"window_end"`
	SampleRate       uint64    `json:"sample_rate"` // the rate of most records
	MixedSampleRates bool      `json:"mixed_sample_rates"`
	Records          int64     `json:"records"` // sampled records in the window
	SkippedLines     int64     `json:"skipped_lines"`
	Budget           string    `json:"budget"` // the L1 budget the recommendations used
	Clusters         []Cluster `json:"clusters"`
	Overall          Family    `json:"overall"` // every key of every family
	Families         []Family  `json:"families"`
	// PromotionModel is P(N, k) for N in 8..128 and k in 1..200.
	PromotionModel []model.Point `json:"promotion_model"`
	Warnings       []string      `json:"warnings,omitempty"`
}

// Cluster summarises the accesses of one cluster.
type Cluster struct {
	Name       string   `json:"name"` // "cluster", or "region/cluster" when the input spans regions
	Cluster    string   `json:"cluster"`
	Region     string   `json:"region"`
	Accesses   uint64   `json:"accesses"`
	UniqueKeys uint64   `json:"unique_keys"`
	WSSBytes   uint64   `json:"wss_bytes"`
	HitRatio   HitRatio `json:"hit_ratio"`
}

// Family is the analysis of one key family (or of all keys, as Overall).
type Family struct {
	Family            string            `json:"family"`
	Accesses          uint64            `json:"accesses"`
	Reads             uint64            `json:"reads"`
	UniqueKeys        uint64            `json:"unique_keys"`
	SampledAccesses   int64             `json:"sampled_accesses"`
	SampledKeys       int64             `json:"sampled_keys"`
	ClusterWSSBytes   map[string]uint64 `json:"cluster_wss_bytes"`
	ClusterUniqueKeys map[string]uint64 `json:"cluster_unique_keys"`
	RegionWSSBytes    uint64            `json:"region_wss_bytes"`
	DuplicationFactor float64           `json:"duplication_factor"`
	Hot10TrafficShare float64           `json:"hot10_traffic_share"`
	HitRatio          HitRatio          `json:"hit_ratio"`
	Hotness           Hotness           `json:"hotness"`
	Promotion         Promotion         `json:"promotion"`
	// RecommendedThreshold is the N to run this family with; 0 without reads.
	RecommendedThreshold int `json:"recommended_threshold"`
}

// HitRatio holds h1, h2 and the combined h1 + (1 − h1)·h2.
type HitRatio struct {
	L1       float64 `json:"l1"`
	L2       float64 `json:"l2"`
	Combined float64 `json:"combined"`
}

// Hotness describes accesses per sampled key.
type Hotness struct {
	P50 int64      `json:"p50"`
	P90 int64      `json:"p90"`
	P99 int64      `json:"p99"`
	Max int64      `json:"max"`
	CDF []CDFPoint `json:"cdf"` // at most 100 points, accesses ascending
}

// CDFPoint: KeyShare of the keys have at most Accesses accesses each and
// make TrafficShare of the family's accesses.
type CDFPoint struct {
	Accesses     int64   `json:"accesses"`
	KeyShare     float64 `json:"key_share"`
	TrafficShare float64 `json:"traffic_share"`
}

// Promotion compares the observed promotions with the model and predicts
// each candidate threshold.
type Promotion struct {
	L2Hits                   uint64       `json:"l2_hits"`
	Promotions               uint64       `json:"promotions"`
	ObservedRate             float64      `json:"observed_rate"`     // promotions ÷ L2 hits
	ImpliedThreshold         int          `json:"implied_threshold"` // round(1 ÷ observed rate); 0 if none
	ObservedPromotedKeyShare float64      `json:"observed_promoted_key_share"`
	ModelPromotedKeyShare    float64      `json:"model_promoted_key_share"`
	OverBudget               bool         `json:"over_budget"`
	BudgetBytes              uint64       `json:"budget_bytes"`
	Predictions              []Prediction `json:"predictions"`
}

// Prediction is the model's forecast for one threshold N.
type Prediction struct {
	Threshold int `json:"threshold"`
	// L1FootprintBytes is the largest per-cluster footprint; the total
	// sums the clusters.
	L1FootprintBytes      uint64  `json:"l1_footprint_bytes"`
	L1FootprintTotalBytes uint64  `json:"l1_footprint_total_bytes"`
	L1Hits                float64 `json:"l1_hits"`
	L1TrafficShare        float64 `json:"l1_traffic_share"`
	PromotedKeyShare      float64 `json:"promoted_key_share"` // of (cluster, key) pairs with reads
}

// Budget is the L1 memory a family may use per cluster: Bytes if non-zero,
// else Fraction of the family's region WSS.
type Budget struct {
	Bytes    uint64
	Fraction float64
}

// DefaultBudget is 10 % of a family's region working set per cluster.
var DefaultBudget = Budget{Fraction: 0.10}

func (b Budget) String() string {
	if b.Bytes > 0 {
		return strconv.FormatUint(b.Bytes, 10)
	}
	return strconv.FormatFloat(100*b.Fraction, 'f', -1, 64) + "%"
}

func (b Budget) bytesFor(regionWSS uint64) uint64 {
	if b.Bytes > 0 {
		return b.Bytes
	}
	return uint64(math.Round(b.Fraction * float64(regionWSS)))
}

// ParseBudget reads a budget: a percentage of the region WSS ("10%"), or
// bytes with an optional binary or decimal unit ("1073741824", "512MiB",
// "2GB", "64k").
func ParseBudget(s string) (Budget, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f <= 0 || f > 100 || math.IsNaN(f) {
			return Budget{}, fmt.Errorf("budget %q: want a percentage in (0, 100]", s)
		}
		return Budget{Fraction: f / 100}, nil
	}
	num := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToLower(strings.TrimSpace(s[len(num):]))
	mult := map[string]uint64{"": 1, "b": 1, "k": 1 << 10, "kb": 1e3, "kib": 1 << 10, "m": 1 << 20, "mb": 1e6, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1e9, "gib": 1 << 30, "t": 1 << 40, "tb": 1e12, "tib": 1 << 40}[unit]
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || mult == 0 || n == 0 || n > math.MaxUint64/mult {
		return Budget{}, fmt.Errorf("budget %q: want bytes (e.g. 512MiB) or a percentage (e.g. 10%%)", s)
	}
	return Budget{Bytes: n * mult}, nil
}

// ParseWindow reads "1h", "1d", "7d", "all" or any Go duration or Nd. "all"
// (and "") is 0: no window.
func ParseWindow(s string) (time.Duration, error) {
	switch s {
	case "", "all":
		return 0, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err == nil && n > 0 && n <= 3650 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New("window " + strconv.Quote(s) + ": want 1h, 1d, 7d, all or a positive duration")
	}
	return d, nil
}

// WindowName spells d the way ParseWindow reads it.
func WindowName(d time.Duration) string {
	switch {
	case d <= 0:
		return "all"
	case d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	return d.String()
}
