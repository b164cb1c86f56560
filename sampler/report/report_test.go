package report

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/sampler/model"
	"github.com/strata-cache/strata/sampler/samplelog"
	"github.com/strata-cache/strata/tiers/promote"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano()

func ent(sec int, cluster, key string, op samplelog.Op, value int, level uint8, promoted bool) samplelog.Entry {
	return samplelog.Entry{Time: t0 + int64(sec)*int64(time.Second), Op: op, Key: key, KeySize: len(key), ValueSize: value,
		Level: level, Promoted: promoted, Cluster: cluster, Region: "r1", SampleRate: 10}
}

// scenario: two clusters, one family, hand-computed numbers.
func scenario() []samplelog.Entry {
	g, s := samplelog.OpGet, samplelog.OpSet
	return []samplelog.Entry{
		ent(1, "c1", "a:1", g, 100, 1, false),
		ent(2, "c1", "a:1", g, 100, 2, true),
		ent(3, "c1", "a:1", g, 0, 0, false),
		ent(4, "c1", "a:2", s, 50, 0, false),
		ent(5, "c2", "a:1", g, 120, 2, false), // the newest size of a:1, for both clusters
		ent(6, "c2", "a:1", samplelog.OpDelete, 0, 0, false),
	}
}

func build(es []samplelog.Entry, opts Options) *Report {
	a := NewAggregator(opts)
	for i := range es {
		a.Add(&es[i])
	}
	return a.Report()
}

func TestScenarioNumbers(t *testing.T) {
	r := build(scenario(), Options{})
	if len(r.Families) != 1 || r.SampleRate != 10 || r.Records != 6 || r.MixedSampleRates {
		t.Fatalf("report %+v", r)
	}
	f := r.Families[0]
	if f.Family != "a:{N}" { // normalised: the records carry no family
		t.Fatalf("family %q", f.Family)
	}
	// Sizes: a:1 = 3+120, a:2 = 3+50; every figure ×10 for the rate.
	if f.Accesses != 60 || f.Reads != 40 || f.UniqueKeys != 20 || f.SampledKeys != 2 || f.SampledAccesses != 6 {
		t.Fatalf("counts %+v", f)
	}
	if f.RegionWSSBytes != 1760 || f.ClusterWSSBytes["c1"] != 1760 || f.ClusterWSSBytes["c2"] != 1230 {
		t.Fatalf("wss %d %v", f.RegionWSSBytes, f.ClusterWSSBytes)
	}
	if f.DuplicationFactor != 2990.0/1760 || f.ClusterUniqueKeys["c2"] != 10 {
		t.Fatalf("dup %v keys %v", f.DuplicationFactor, f.ClusterUniqueKeys)
	}
	// Reads 4: one L1 hit, two L2 hits. h2 = 2/3, combined = 3/4.
	if f.HitRatio.L1 != 0.25 || math.Abs(f.HitRatio.L2-2.0/3) > 1e-15 || math.Abs(f.HitRatio.Combined-0.75) > 1e-15 {
		t.Fatalf("hit ratio %+v", f.HitRatio)
	}
	// 2 keys: the hottest 10 % is 0.2 of a:1 (5 accesses) out of 6.
	if math.Abs(f.Hot10TrafficShare-0.2*5/6) > 1e-15 {
		t.Fatalf("hot10 %v", f.Hot10TrafficShare)
	}
	if f.Hotness.P50 != 1 || f.Hotness.Max != 5 || len(f.Hotness.CDF) != 2 || f.Hotness.CDF[0] != (CDFPoint{1, 0.5, 1.0 / 6}) {
		t.Fatalf("hotness %+v", f.Hotness)
	}
	// One promotion in two L2 hits; pairs with L2 hits: (c1,a:1) promoted, (c2,a:1) not.
	p := f.Promotion
	if p.L2Hits != 20 || p.Promotions != 10 || p.ObservedRate != 0.5 || p.ImpliedThreshold != 2 || p.ObservedPromotedKeyShare != 0.5 {
		t.Fatalf("promotion %+v", p)
	}
	if want := (promote.ProbabilityRate(0.5, 1) + promote.ProbabilityRate(0.5, 1)) / 2; p.ModelPromotedKeyShare != want {
		t.Fatalf("model share %v want %v", p.ModelPromotedKeyShare, want)
	}
	// Clusters sorted by name; the overall row equals the only family.
	if len(r.Clusters) != 2 || r.Clusters[0].Name != "c1" || r.Clusters[0].Accesses != 40 || r.Clusters[1].WSSBytes != 1230 {
		t.Fatalf("clusters %+v", r.Clusters)
	}
	if r.Overall.RegionWSSBytes != f.RegionWSSBytes || r.Overall.DuplicationFactor != f.DuplicationFactor || r.Overall.Family != "*" {
		t.Fatalf("overall %+v", r.Overall)
	}
}

// The paper's combined hit ratio: 66 % + 34 % × 80 % = 93.2 %.
func TestCombinedHitRatio(t *testing.T) {
	h := hitRatio(1000, 660, 272)
	if math.Abs(h.L2-0.8) > 1e-12 || math.Abs(h.Combined-0.932) > 1e-12 {
		t.Fatalf("%+v", h)
	}
}

// Order of arrival does not change the report.
func TestOrderIndependent(t *testing.T) {
	es := scenario()
	es = append(es, ent(5, "c3", "b:9", samplelog.OpSet, 70, 0, false), ent(5, "c3", "b:9", samplelog.OpSet, 80, 0, false))
	var fwd, rev bytes.Buffer
	WriteJSON(&fwd, build(es, Options{}))
	for i, j := 0, len(es)-1; i < j; i, j = i+1, j-1 {
		es[i], es[j] = es[j], es[i]
	}
	WriteJSON(&rev, build(es, Options{}))
	if fwd.String() != rev.String() {
		t.Fatal("report depends on record order")
	}
	if !strings.Contains(fwd.String(), `"region_wss_bytes": 830`) { // tie at t=5: the larger value size
		t.Fatalf("tie not broken by size:\n%s", fwd.String())
	}
}

// A family of one very hot key and many cold ones: the smallest N whose
// footprint fits is recommended; a budget nothing fits gives the largest N.
func TestRecommendedThreshold(t *testing.T) {
	var es []samplelog.Entry
	for i := 0; i < 1000; i++ {
		es = append(es, ent(1, "c1", "hot", samplelog.OpGet, 97, 2, false))
	}
	for i := 0; i < 1000; i++ {
		k := "cold" + string(rune('A'+i%26)) + strings.Repeat("x", i/26)
		e := ent(2, "c1", k, samplelog.OpGet, 100-len(k), 2, false)
		e.Family = "cold"
		es = append(es, e)
	}
	for i := range es {
		es[i].SampleRate = 1
		if es[i].Key == "hot" {
			es[i].Family = "cold" // one family holding both
		}
	}
	r := build(es, Options{}) // 10 % of 1001 × 100 bytes
	f := r.Families[0]
	if f.RegionWSSBytes != 100100 || f.Promotion.BudgetBytes != 10010 {
		t.Fatalf("wss %d budget %d", f.RegionWSSBytes, f.Promotion.BudgetBytes)
	}
	// Footprint(N) = 100·(P(N,1000) + 1000/N): N=8 → 12 600 > budget,
	// N=16 → 6 350 fits and has more L1 hits than any larger N.
	for _, p := range f.Promotion.Predictions {
		want := 100 * (promote.Probability(uint32(p.Threshold), 1000) + 1000*promote.Probability(uint32(p.Threshold), 1))
		if math.Abs(float64(p.L1FootprintBytes)-want) > 0.5 {
			t.Errorf("N=%d footprint %d want %.1f", p.Threshold, p.L1FootprintBytes, want)
		}
		if hits := model.ExpectedL1Hits(p.Threshold, 1000); math.Abs(p.L1Hits-hits) > 1e-9 || math.Abs(p.L1TrafficShare-hits/2000) > 1e-12 {
			t.Errorf("N=%d hits %v want %v", p.Threshold, p.L1Hits, hits)
		}
	}
	if f.RecommendedThreshold != 16 || f.Promotion.OverBudget {
		t.Fatalf("recommended %d over %v", f.RecommendedThreshold, f.Promotion.OverBudget)
	}
	r = build(es, Options{Budget: Budget{Bytes: 100}})
	if f := r.Families[0]; f.RecommendedThreshold != 128 || !f.Promotion.OverBudget {
		t.Fatalf("tiny budget: %d %v", f.RecommendedThreshold, f.Promotion.OverBudget)
	}
	r = build(es, Options{Budget: Budget{Bytes: 1 << 30}})
	if f := r.Families[0]; f.RecommendedThreshold != 8 {
		t.Fatalf("huge budget: %d", f.RecommendedThreshold)
	}
}

func TestRegionsAndRates(t *testing.T) {
	es := scenario()
	es[0].Region, es[0].SampleRate = "r2", 100
	r := build(es, Options{})
	if !r.MixedSampleRates || r.SampleRate != 10 || len(r.Warnings) != 2 {
		t.Fatalf("rates %v %d warnings %q", r.MixedSampleRates, r.SampleRate, r.Warnings)
	}
	names := []string{r.Clusters[0].Name, r.Clusters[1].Name, r.Clusters[2].Name}
	if strings.Join(names, ",") != "r1/c1,r1/c2,r2/c1" {
		t.Fatalf("cluster names %v", names)
	}
}

func writeLines(t *testing.T, path string, es []samplelog.Entry, extra map[int]string) {
	t.Helper()
	var b []byte
	for i := range es {
		if s, ok := extra[i]; ok {
			b = append(b, s...)
		}
		b = samplelog.AppendJSON(b, &es[i])
	}
	if s, ok := extra[len(es)]; ok {
		b = append(b, s...)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Malformed and truncated lines are reported as FILE:LINE and skipped; the
// rest gives the same numbers as a clean file.
func TestFromFilesSkipsBadLines(t *testing.T) {
	dir := t.TempDir()
	es := scenario()
	clean := filepath.Join(dir, "clean.jsonl")
	writeLines(t, clean, es, nil)
	dirty := filepath.Join(dir, "dirty.jsonl")
	writeLines(t, dirty, es, map[int]string{2: "{\"time\": oops\n", 4: "{}\n", len(es): `{"time":"2026-05-01T12:00:09.000000Z","op":"get","ke`})
	var bad []string
	r1, err := FromFiles([]string{clean}, 0, Options{}, func(le *samplelog.LineError) { t.Error(le) })
	if err != nil {
		t.Fatal(err)
	}
	r2, err := FromFiles([]string{dirty}, 24*time.Hour, Options{}, func(le *samplelog.LineError) { bad = append(bad, le.Error()) })
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 3 || !strings.HasPrefix(bad[0], dirty+":3: ") || !strings.HasPrefix(bad[1], dirty+":6: ") || !strings.HasPrefix(bad[2], dirty+":9: truncated") {
		t.Fatalf("bad lines %q", bad)
	}
	if r2.SkippedLines != 3 || r2.Window != "1d" {
		t.Fatalf("skipped %d window %s", r2.SkippedLines, r2.Window)
	}
	f1, f2 := r1.Families[0], r2.Families[0]
	if f1.Accesses != f2.Accesses || f1.RegionWSSBytes != f2.RegionWSSBytes || f1.DuplicationFactor != f2.DuplicationFactor {
		t.Fatalf("clean %+v\ndirty %+v", f1, f2)
	}
	if _, err := FromFiles([]string{filepath.Join(dir, "missing.jsonl")}, 0, Options{}, nil); err == nil {
		t.Fatal("missing file accepted")
	}
}

// Only records in the window ending at the newest record count.
func TestWindow(t *testing.T) {
	dir := t.TempDir()
	day := int64(24 * time.Hour)
	es := []samplelog.Entry{
		ent(0, "c1", "old:1", samplelog.OpGet, 10, 0, false),
		ent(0, "c1", "mid:1", samplelog.OpGet, 10, 0, false),
		ent(0, "c1", "new:1", samplelog.OpGet, 10, 0, false),
	}
	es[1].Time += day + int64(time.Hour)
	es[2].Time += 2 * day
	writeLines(t, filepath.Join(dir, "a.jsonl"), es[:2], nil)
	writeLines(t, filepath.Join(dir, "b.jsonl"), es[2:], nil)
	paths, err := ExpandPaths([]string{dir})
	if err != nil || len(paths) != 2 {
		t.Fatalf("expand %v %v", paths, err)
	}
	for _, c := range []struct {
		window time.Duration
		want   int64
	}{{time.Hour, 1}, {24 * time.Hour, 2}, {7 * 24 * time.Hour, 3}, {0, 3}} {
		r, err := FromFiles(paths, c.window, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Records != c.want || r.WindowEnd.UnixNano() != es[2].Time {
			t.Errorf("window %v: %d records (want %d), end %v", c.window, r.Records, c.want, r.WindowEnd)
		}
		if c.window > 0 && r.WindowStart.UnixNano() != es[2].Time-int64(c.window) {
			t.Errorf("window %v: start %v", c.window, r.WindowStart)
		}
	}
}

func TestParseBudgetAndWindow(t *testing.T) {
	for s, want := range map[string]Budget{"10%": {Fraction: 0.1}, "2.5%": {Fraction: 0.025}, "4096": {Bytes: 4096},
		"512MiB": {Bytes: 512 << 20}, "2GB": {Bytes: 2e9}, "64k": {Bytes: 64 << 10}} {
		if got, err := ParseBudget(s); err != nil || got != want {
			t.Errorf("ParseBudget(%q) = %+v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "0", "-5", "10 parsecs", "0%", "101%", "x%"} {
		if _, err := ParseBudget(s); err == nil {
			t.Errorf("ParseBudget(%q) accepted", s)
		}
	}
	for s, want := range map[string]time.Duration{"1h": time.Hour, "1d": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "all": 0, "90m": 90 * time.Minute} {
		if got, err := ParseWindow(s); err != nil || got != want {
			t.Errorf("ParseWindow(%q) = %v, %v", s, got, err)
		}
		if s != "90m" && WindowName(want) != s {
			t.Errorf("WindowName(%v) = %q", want, WindowName(want))
		}
	}
	for _, s := range []string{"0d", "-1h", "week"} {
		if _, err := ParseWindow(s); err == nil {
			t.Errorf("ParseWindow(%q) accepted", s)
		}
	}
}

func TestRenderings(t *testing.T) {
	es := scenario()
	es = append(es, ent(7, "c2", "photos:foobar:12345:c1", samplelog.OpGet, 300, 1, false))
	r := build(es, Options{Window: "1d"})

	var text bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAMILIES", "photos:foobar:{N}:c{N}", "a:{N}", "1.699", "PROMOTION PROBABILITY", "27.20%", "63.79%", "95.82%"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"window", "sample_rate", "clusters", "families", "promotion_model"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("json lacks %q", k)
		}
	}
	fam := doc["families"].([]any)[0].(map[string]any)
	for _, k := range []string{"family", "accesses", "unique_keys", "cluster_wss_bytes", "region_wss_bytes", "duplication_factor", "hot10_traffic_share", "hit_ratio", "recommended_threshold"} {
		if _, ok := fam[k]; !ok {
			t.Errorf("family lacks %q", k)
		}
	}
	if hr := fam["hit_ratio"].(map[string]any); hr["combined"] == nil || hr["l1"] == nil || hr["l2"] == nil {
		t.Errorf("hit_ratio %v", hr)
	}
	pm := doc["promotion_model"].([]any)
	if len(pm) != 1000 {
		t.Fatalf("promotion_model has %d points", len(pm))
	}
	p := pm[2*200+9].(map[string]any)
	if p["threshold"] != 32.0 || p["trials"] != 10.0 || math.Abs(p["probability"].(float64)-0.272) > 0.0001 {
		t.Errorf("model point %v", p)
	}

	var page bytes.Buffer
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	h := page.String()
	if n := strings.Count(h, "<svg"); n != 4 || strings.Count(h, "</svg>") != 4 {
		t.Errorf("%d charts", n)
	}
	for _, bad := range []string{"http://", "https://", "<script", "<link", "src="} {
		if strings.Contains(h, bad) {
			t.Errorf("html contains %q", bad)
		}
	}
	if !strings.Contains(h, "photos:foobar:{N}:c{N}") || !strings.HasPrefix(h, "<!DOCTYPE html>") || !strings.Contains(h, "<polyline") || !strings.Contains(h, "<rect") {
		t.Error("html lacks content")
	}
}

func TestEmptyReportRenders(t *testing.T) {
	r := NewAggregator(Options{}).Report()
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil || !strings.Contains(b.String(), "no records") {
		t.Fatalf("%v %s", err, b.String())
	}
	b.Reset()
	if err := WriteHTML(&b, r); err != nil || strings.Contains(b.String(), "NaN") {
		t.Fatalf("%v", err)
	}
	b.Reset()
	if err := WriteJSON(&b, r); err != nil || !strings.Contains(b.String(), `"families": []`) {
		t.Fatalf("%v %s", err, b.String())
	}
}
