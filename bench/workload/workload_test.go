package workload

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

func mustWorkload(t *testing.T, p *Profile) *Workload {
	t.Helper()
	w, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func oneFamily(keys uint64, alpha float64) *Profile {
	return &Profile{
		Name: "test", Seed: 42, Clusters: 1, Overlap: 1,
		Mix:      Mix{Get: 1},
		Families: []Family{{Name: "k", Pattern: "k:{id}", Keys: keys, Weight: 1, Alpha: alpha, ValueSize: Fixed(10)}},
	}
}

// within reports whether an observed count is within 4.5 standard deviations
// of a binomial expectation.
func within(count, n int, p float64) bool {
	sd := math.Sqrt(float64(n) * p * (1 - p))
	return math.Abs(float64(count)-float64(n)*p) <= 4.5*sd+1e-9
}

func TestSizeDistributions(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const n = 200_000
	draw := func(d Dist) []int {
		if _, err := d.validate(); err != nil {
			t.Fatal(err)
		}
		out := make([]int, n)
		for i := range out {
			out[i] = d.Quantile(r.Float64())
		}
		return out
	}
	meanSD := func(xs []int) (float64, float64) {
		var s, ss float64
		for _, x := range xs {
			s += float64(x)
		}
		m := s / float64(len(xs))
		for _, x := range xs {
			ss += (float64(x) - m) * (float64(x) - m)
		}
		return m, math.Sqrt(ss / float64(len(xs)))
	}

	for _, x := range draw(Fixed(100)) {
		if x != 100 {
			t.Fatalf("fixed 100 drew %d", x)
		}
	}

	u := draw(Uniform(10, 19))
	hist := map[int]int{}
	for _, x := range u {
		hist[x]++
	}
	for v := 10; v <= 19; v++ {
		if !within(hist[v], n, 0.1) {
			t.Errorf("uniform 10..19: value %d drawn %d times of %d", v, hist[v], n)
		}
	}
	if len(hist) != 10 {
		t.Errorf("uniform 10..19 drew values outside the range: %v", hist)
	}

	m, sd := meanSD(draw(Dist{Kind: "normal", Mean: 300, StdDev: 40, Min: 1, Max: 10000}))
	if math.Abs(m-300) > 1 || math.Abs(sd-40) > 1 {
		t.Errorf("normal(300, 40): mean %.2f sd %.2f", m, sd)
	}

	clamped := draw(Dist{Kind: "normal", Mean: 50, StdDev: 100, Min: 10, Max: 80})
	for _, x := range clamped {
		if x < 10 || x > 80 {
			t.Fatalf("clamped normal drew %d outside [10, 80]", x)
		}
	}

	ln := draw(Lognormal(230, 1.0, 1, 0))
	sort.Ints(ln)
	if med := ln[n/2]; math.Abs(float64(med)-230) > 5 {
		t.Errorf("lognormal median 230: drew median %d", med)
	}
	// P(X > median·e^σ) = P(Z > 1) = 15.87 %.
	above := n - sort.SearchInts(ln, int(math.Round(230*math.E))+1)
	if !within(above, n, 0.1587) {
		t.Errorf("lognormal: %d of %d above median·e^σ, want about 15.87 %%", above, n)
	}

	emp := Empirical([2]float64{64, 5}, [2]float64{512, 3}, [2]float64{4096, 2})
	hist = map[int]int{}
	for _, x := range draw(emp) {
		hist[x]++
	}
	for v, p := range map[int]float64{64: 0.5, 512: 0.3, 4096: 0.2} {
		if !within(hist[v], n, p) {
			t.Errorf("empirical: value %d drawn %d times of %d, want share %v", v, hist[v], n, p)
		}
	}
	if got := emp.Expected(); math.Abs(got-(64*0.5+512*0.3+4096*0.2)) > 1e-9 {
		t.Errorf("empirical expected value %v", got)
	}
}

// Value sizes are per key: the distribution over keys matches the profile,
// and a key's size never changes.
func TestPerKeySizesFollowDistribution(t *testing.T) {
	p := oneFamily(100_000, 0)
	p.Families[0].ValueSize = Empirical([2]float64{10, 1}, [2]float64{1000, 3})
	p.Families[0].KeySize = &Dist{Kind: "uniform", Min: 12, Max: 20}
	w := mustWorkload(t, p)
	var big int
	for id := uint64(0); id < 100_000; id++ {
		vs := w.ValueSize(0, id)
		if vs != w.ValueSize(0, id) {
			t.Fatal("value size of one key changed")
		}
		if vs == 1000 {
			big++
		}
		key := w.AppendKey(nil, 0, id)
		if len(key) < 12 || len(key) > 20 || !bytes.HasPrefix(key, []byte("k:")) {
			t.Fatalf("key %q: want k:<id> with 12..20 bytes", key)
		}
	}
	if !within(big, 100_000, 0.75) {
		t.Errorf("%d of 100000 keys have the 1000-byte size, want about 75 %%", big)
	}
}

func TestClusterOverlap(t *testing.T) {
	const keys = 10_000
	for _, o := range []float64{0, 0.3, 0.5, 0.9, 1} {
		p := oneFamily(keys, 0)
		p.Clusters, p.Overlap = 3, o
		w := mustWorkload(t, p)
		universe := make([]map[uint64]bool, 3)
		for c := range universe {
			universe[c] = map[uint64]bool{}
			for r := uint64(0); r < keys; r++ {
				universe[c][w.KeyID(0, c, r)] = true
			}
			if len(universe[c]) != keys {
				t.Fatalf("overlap %v: cluster %d has %d distinct keys, want %d", o, c, len(universe[c]), keys)
			}
		}
		wantShared := int(w.SharedKeys(0))
		if math.Abs(float64(wantShared)-keys*o) > 1 {
			t.Errorf("overlap %v: %d shared keys of %d", o, wantShared, keys)
		}
		if o > 0 && !w.Shared(0) {
			t.Errorf("overlap %v: the hottest rank is not shared", o)
		}
		for a := 0; a < 3; a++ {
			for b := a + 1; b < 3; b++ {
				common := 0
				for id := range universe[a] {
					if universe[b][id] {
						common++
					}
				}
				if common != wantShared {
					t.Errorf("overlap %v: clusters %d and %d share %d keys, want %d", o, a, b, common, wantShared)
				}
			}
		}
		if got, want := w.KeyCount(0), uint64(wantShared+3*(keys-wantShared)); got != want {
			t.Errorf("overlap %v: KeyCount %d, want %d", o, got, want)
		}
		// Shared ranks are spread evenly: the hottest tenth holds its share.
		hot := 0
		for r := uint64(0); r < keys/10; r++ {
			if w.Shared(r) {
				hot++
			}
		}
		if math.Abs(float64(hot)-float64(keys/10)*o) > 1 {
			t.Errorf("overlap %v: %d of the hottest %d ranks shared", o, hot, keys/10)
		}
	}
}

// Measured on generated traffic: the share of one cluster's requests that go
// to keys the other cluster also uses equals the overlap fraction.
func TestGeneratedTrafficOverlap(t *testing.T) {
	p := oneFamily(5_000, 0)
	p.Clusters, p.Overlap = 2, 0.4
	w := mustWorkload(t, p)
	seen := [2]map[uint64]bool{{}, {}}
	const n = 100_000
	var req Request
	shared := 0
	for c := 0; c < 2; c++ {
		g := w.Generator(uint64(c), c)
		for i := 0; i < n; i++ {
			g.Next(&req)
			if req.Cluster != c {
				t.Fatalf("generator for cluster %d produced cluster %d", c, req.Cluster)
			}
			seen[c][req.KeyID] = true
			if c == 0 && w.Shared(req.Rank) {
				shared++
			}
		}
	}
	// With uniform popularity the share of requests to shared keys is the
	// overlap fraction.
	if !within(shared, n, 0.4) {
		t.Errorf("%d of %d requests went to shared keys, want share 0.4", shared, n)
	}
	// What cluster 0 drew that cluster 1 also drew is (nearly all) the
	// shared keys: both clusters draw every key of a 5000-key universe.
	common := 0
	for id := range seen[0] {
		if seen[1][id] {
			common++
		}
	}
	if frac := float64(common) / float64(len(seen[0])); math.Abs(frac-0.4) > 0.01 {
		t.Errorf("cluster 0 and 1 have %.3f of cluster 0's keys in common, want 0.40", frac)
	}
	for id := range seen[1] {
		if id < w.fams[0].shared {
			continue
		}
		if seen[0][id] {
			t.Fatalf("private key %d of cluster 1 was drawn by cluster 0", id)
		}
	}
}

func TestMixAndFamilyWeights(t *testing.T) {
	p := &Profile{
		Name: "mix", Seed: 9, Clusters: 1, Overlap: 1,
		Mix: Mix{Get: 0.5, Set: 0.2, Delete: 0.1, Gets: 0.15, MetaGet: 0.05},
		Families: []Family{
			{Name: "a", Keys: 1000, Weight: 3, Alpha: 1.1, ValueSize: Fixed(1)},
			{Name: "b", Keys: 1000, Weight: 1, ValueSize: Fixed(2)},
		},
	}
	w := mustWorkload(t, p)
	g := w.Generator(1, 0)
	const n = 200_000
	var ops [numOps]int
	var fams [2]int
	var req Request
	for i := 0; i < n; i++ {
		g.Next(&req)
		ops[req.Op]++
		fams[req.Family]++
		if want := []string{"a:", "b:"}[req.Family]; !strings.HasPrefix(string(req.Key), want) {
			t.Fatalf("family %d key %q", req.Family, req.Key)
		}
	}
	for op, share := range []float64{0.5, 0.2, 0.1, 0.15, 0.05} {
		if !within(ops[op], n, share) {
			t.Errorf("%v: %d of %d, want share %v", Op(op), ops[op], n, share)
		}
	}
	if !within(fams[0], n, 0.75) {
		t.Errorf("family a drew %d of %d, want share 0.75", fams[0], n)
	}
}

func TestGeneratorDeterminism(t *testing.T) {
	w := mustWorkload(t, oneFamily(1_000_000, 0.99))
	seq := func(stream uint64) string {
		g := w.Generator(stream, 0)
		var b strings.Builder
		var r Request
		for i := 0; i < 1000; i++ {
			g.Next(&r)
			b.Write(r.Key)
			b.WriteByte(byte('0' + r.Op))
		}
		return b.String()
	}
	if first, again := seq(1), seq(1); first != again {
		t.Error("same stream, different requests")
	}
	if seq(1) == seq(2) {
		t.Error("different streams, same requests")
	}
}
