package sampler_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/sampler/report"
	"github.com/strata-cache/strata/sampler/samplelog"
)

// access is one request of the synthetic workload.
type access struct {
	cluster  int
	family   string // known by construction, independent of the normaliser
	key      string
	keyBytes []byte
	op       sampler.Op
	value    int
	level    uint8
	promoted bool
	time     int64
}

var start = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)

const clusters = 3

// workload generates perCluster accesses for each of 3 clusters over four
// families with different sharing between clusters:
//
//   - photos:foobar:{N}:c{N}: one key space, every cluster draws from it
//     (high duplication);
//   - feed:{N}: each cluster mostly reads its own users (low duplication);
//   - profile:{N}:v{N}: sliding, overlapping windows of ids;
//   - sess:{H}: hex ids, half shared.
//
// Popularity is Zipf-like: 70 % of draws from a Zipf over the family's ids,
// 30 % uniform (the long tail). Gets are 85 %, sets 10 % (which change the
// value size), deletes 3 %, touches 2 %. Times are distinct microseconds.
func workload(seed uint64, perCluster int) []access {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	type space struct {
		ids  int
		zipf *rand.Zipf
	}
	newSpace := func(ids int) space { return space{ids, rand.NewZipf(rng, 1.05, 1, uint64(ids-1))} }
	photos, wide := newSpace(25000), newSpace(100000)
	draw := func(sp space) int {
		if rng.IntN(10) < 6 {
			// Scatter ranks so popularity is not ordered by id.
			return int((sp.zipf.Uint64()*7919 + 13) % uint64(sp.ids))
		}
		return rng.IntN(sp.ids)
	}
	baseSize := func(id int) int { return 100 + (id*2654435761)%400 }
	sizes := map[string]int{}
	var out []access
	for i := 0; i < perCluster*clusters; i++ {
		c := i % clusters
		var fam, key string
		var id int
		switch rng.IntN(4) {
		case 0:
			id = draw(photos)
			fam, key = "photos:foobar:{N}:c{N}", fmt.Sprintf("photos:foobar:%d:c%d", id, 1+id%3)
		case 1:
			id = draw(wide)
			if rng.IntN(10) < 8 {
				id = c*wide.ids/clusters + id%(wide.ids/clusters)
			}
			fam, key = "feed:{N}", fmt.Sprintf("feed:%d", id)
		case 2:
			id = (c*wide.ids/6 + draw(wide)%(wide.ids/2)) % wide.ids
			fam, key = "profile:{N}:v{N}", fmt.Sprintf("profile:%d:v%d", id, 1+id%4)
		default:
			id = draw(wide)
			if id%2 == 1 {
				id = id/2*clusters + c // odd draws: this cluster's own sessions
			}
			fam, key = "sess:{H}", fmt.Sprintf("sess:a%015x", uint64(id)*0x9e3779b97f4a7c15>>4)
		}
		a := access{cluster: c, family: fam, key: key, keyBytes: []byte(key), time: start.UnixNano() + int64(i)*1000}
		if _, ok := sizes[key]; !ok {
			sizes[key] = baseSize(id)
		}
		switch p := rng.IntN(100); {
		case p < 85:
			a.op = sampler.OpGet
			switch q := rng.IntN(100); {
			case q < 45:
				a.level, a.value = 1, sizes[key]
			case q < 85:
				a.level, a.value = 2, sizes[key]
				a.promoted = rng.IntN(32) == 0
			}
		case p < 95:
			a.op = sampler.OpSet
			sizes[key] = baseSize(id) + rng.IntN(64)
			a.value = sizes[key]
		case p < 98:
			a.op = sampler.OpDelete
		default:
			a.op = sampler.OpTouch
		}
		out = append(out, a)
	}
	return out
}

// truth is a family's numbers computed directly from the full stream.
type truth struct {
	accesses, reads, l1, l2 uint64
	keys                    map[string]bool
	clusterKeys             [clusters]map[string]bool
	keySize, valSize        map[string]int
	perKey                  map[string]uint64

	// Filled by finish.
	regionWSS  uint64
	clusterWSS [clusters]uint64
	dup        float64
}

func (t *truth) finish() {
	for k := range t.keys {
		t.regionWSS += uint64(t.keySize[k] + t.valSize[k])
	}
	var sum uint64
	for c := range t.clusterKeys {
		for k := range t.clusterKeys[c] {
			t.clusterWSS[c] += uint64(t.keySize[k] + t.valSize[k])
		}
		sum += t.clusterWSS[c]
	}
	t.dup = float64(sum) / float64(t.regionWSS)
}

// hot10 is the share of accesses made by the hottest tenth of keys, the key
// on the boundary counted in proportion.
func (t *truth) hot10() float64 {
	var counts []uint64
	var total uint64
	for _, n := range t.perKey {
		counts = append(counts, n)
		total += n
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	left, hot := 0.1*float64(len(counts)), 0.0
	for _, n := range counts {
		if left <= 0 {
			break
		}
		take := math.Min(1, left)
		hot += take * float64(n)
		left -= take
	}
	return hot / float64(total)
}

func groundTruth(stream []access) map[string]*truth {
	out := map[string]*truth{}
	for _, a := range stream {
		t := out[a.family]
		if t == nil {
			t = &truth{keys: map[string]bool{}, keySize: map[string]int{}, valSize: map[string]int{}, perKey: map[string]uint64{}}
			for c := range t.clusterKeys {
				t.clusterKeys[c] = map[string]bool{}
			}
			out[a.family] = t
		}
		t.accesses++
		t.keys[a.key] = true
		t.clusterKeys[a.cluster][a.key] = true
		t.keySize[a.key] = len(a.key)
		t.perKey[a.key]++
		if a.value > 0 { // the newest non-zero value size; the stream is in time order
			t.valSize[a.key] = a.value
		}
		if a.op == sampler.OpGet {
			t.reads++
			switch a.level {
			case 1:
				t.l1++
			case 2:
				t.l2++
			}
		}
	}
	for _, t := range out {
		t.finish()
	}
	return out
}

// runThroughSamplers feeds the stream to one real sampler per cluster,
// records what Sampled selects, and reports over the logs they write.
func runThroughSamplers(t *testing.T, stream []access, rate, seed uint64) (*report.Report, map[string]int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	var ss [clusters]*sampler.Sampler
	for c := range ss {
		s, err := sampler.New(sampler.Config{Rate: rate, Seed: seed, RingSize: 1 << 13, Dir: filepath.Join(dir, fmt.Sprintf("c%d", c+1)),
			Gzip: c == 1, MaxFileBytes: 1 << 20, Cluster: fmt.Sprintf("c%d", c+1), Region: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		ss[c] = s
	}
	sampledKeys := map[string]map[string]bool{}
	for i, a := range stream {
		s := ss[a.cluster]
		if !s.Sampled(a.keyBytes) {
			continue
		}
		if sampledKeys[a.family] == nil {
			sampledKeys[a.family] = map[string]bool{}
		}
		sampledKeys[a.family][a.key] = true
		s.Record(&sampler.Record{TimeUnixNano: a.time, Op: a.op, Key: a.keyBytes, ValueSize: a.value, Level: a.level, Promoted: a.promoted})
		if i%2048 == 0 { // keep the ring from overflowing: this test wants no drops
			if st := s.Stats(); st.RingLen > st.RingCap/2 {
				if err := s.Sync(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var paths []string
	for c, s := range ss {
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.Dropped != 0 || st.Written != st.Recorded || st.LogErrors != 0 {
			t.Fatalf("cluster %d: %+v", c+1, st)
		}
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("c%d", c+1)))
	}
	files, err := report.ExpandPaths(paths)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.FromFiles(files, 7*24*time.Hour, report.Options{}, func(le *samplelog.LineError) { t.Error(le) })
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for f, ks := range sampledKeys {
		counts[f] = len(ks)
	}
	return r, counts
}

func families(r *report.Report) map[string]report.Family {
	m := map[string]report.Family{}
	for _, f := range r.Families {
		m[f.Family] = f
	}
	return m
}

// With rate 1 every access is recorded and the report is exact.
func TestReportExactAtRateOne(t *testing.T) {
	stream := workload(1, 3000)
	want := groundTruth(stream)
	r, _ := runThroughSamplers(t, stream, 1, sampler.DefaultSeed)
	got := families(r)
	if len(got) != len(want) || r.SampleRate != 1 || r.Records != int64(len(stream)) || len(r.Clusters) != clusters {
		t.Fatalf("families %d want %d, rate %d, records %d, clusters %d", len(got), len(want), r.SampleRate, r.Records, len(r.Clusters))
	}
	for name, w := range want {
		f, ok := got[name]
		if !ok {
			t.Fatalf("family %s missing", name)
		}
		if f.Accesses != w.accesses || f.Reads != w.reads || f.UniqueKeys != uint64(len(w.keys)) || f.RegionWSSBytes != w.regionWSS {
			t.Errorf("%s: accesses %d/%d reads %d/%d keys %d/%d region wss %d/%d", name, f.Accesses, w.accesses, f.Reads, w.reads,
				f.UniqueKeys, len(w.keys), f.RegionWSSBytes, w.regionWSS)
		}
		for c := 0; c < clusters; c++ {
			cn := fmt.Sprintf("c%d", c+1)
			if f.ClusterWSSBytes[cn] != w.clusterWSS[c] || f.ClusterUniqueKeys[cn] != uint64(len(w.clusterKeys[c])) {
				t.Errorf("%s %s: wss %d want %d, keys %d want %d", name, cn, f.ClusterWSSBytes[cn], w.clusterWSS[c], f.ClusterUniqueKeys[cn], len(w.clusterKeys[c]))
			}
		}
		if f.DuplicationFactor != w.dup {
			t.Errorf("%s: duplication %v want %v", name, f.DuplicationFactor, w.dup)
		}
		if f.DuplicationFactor < 1 || f.DuplicationFactor > clusters {
			t.Errorf("%s: duplication %v out of [1, %d]", name, f.DuplicationFactor, clusters)
		}
		if math.Abs(f.Hot10TrafficShare-w.hot10()) > 1e-12 {
			t.Errorf("%s: hot10 %v want %v", name, f.Hot10TrafficShare, w.hot10())
		}
		h1 := float64(w.l1) / float64(w.reads)
		h2 := float64(w.l2) / float64(w.reads-w.l1)
		if math.Abs(f.HitRatio.L1-h1) > 1e-12 || math.Abs(f.HitRatio.L2-h2) > 1e-12 || math.Abs(f.HitRatio.Combined-(h1+(1-h1)*h2)) > 1e-12 {
			t.Errorf("%s: hit ratio %+v want h1 %v h2 %v", name, f.HitRatio, h1, h2)
		}
	}
	// The families differ in sharing as designed.
	if got["photos:foobar:{N}:c{N}"].DuplicationFactor <= got["feed:{N}"].DuplicationFactor {
		t.Errorf("shared photos (%v) should duplicate more than per-cluster feeds (%v)",
			got["photos:foobar:{N}:c{N}"].DuplicationFactor, got["feed:{N}"].DuplicationFactor)
	}
}

// With rate 10, the working sets and duplication factor of every family
// with at least 200 sampled keys are within 10 % of the truth, for three
// different sampling seeds (three different samples of the same stream).
func TestReportEstimatesAtRateTen(t *testing.T) {
	stream := workload(2, 120000)
	want := groundTruth(stream)
	seeds := []uint64{sampler.DefaultSeed, 1, 0xfeedface}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%#x", seed), func(t *testing.T) {
			t.Parallel()
			checkRateTen(t, stream, want, seed)
		})
	}
}

func checkRateTen(t *testing.T, stream []access, want map[string]*truth, seed uint64) {
	{
		r, sampled := runThroughSamplers(t, stream, 10, seed)
		got := families(r)
		checked := 0
		for name, w := range want {
			f := got[name]
			if int64(sampled[name]) != f.SampledKeys {
				t.Errorf("seed %#x %s: report has %d sampled keys, the samplers chose %d", seed, name, f.SampledKeys, sampled[name])
			}
			if f.SampledKeys < 200 {
				continue
			}
			checked++
			worst := 0.0
			within := func(what string, est, exact float64) {
				e := math.Abs(est-exact) / exact
				worst = math.Max(worst, e)
				if e > 0.10 {
					t.Errorf("seed %#x %s: %s %.0f vs exact %.0f (%.1f %% off)", seed, name, what, est, exact, 100*e)
				}
			}
			within("region wss", float64(f.RegionWSSBytes), float64(w.regionWSS))
			for c := 0; c < clusters; c++ {
				within(fmt.Sprintf("c%d wss", c+1), float64(f.ClusterWSSBytes[fmt.Sprintf("c%d", c+1)]), float64(w.clusterWSS[c]))
			}
			within("duplication factor", f.DuplicationFactor, w.dup)
			t.Logf("%-24s sampled keys %5d  dup %.3f (exact %.3f)  region wss %d (exact %d)  worst error %.1f %%", name, f.SampledKeys,
				f.DuplicationFactor, w.dup, f.RegionWSSBytes, w.regionWSS, 100*worst)
		}
		if checked != len(want) {
			t.Errorf("seed %#x: only %d of %d families had 200 sampled keys; the workload is too small to test", seed, checked, len(want))
		}
	}
}
