package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/sampler/report"
)

// writeSampleLogs has three samplers, clusters c1..c3 of region r1, log the
// same family: c1 reads user:0..99, c2 user:0..49, c3 user:50..99, every
// value 100 bytes. Cluster working sets sum to twice the region's: the
// duplication factor is exactly 2.
func writeSampleLogs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := time.Now().Add(-time.Minute).UnixNano()
	for c, keys := range [][2]int{{0, 100}, {0, 50}, {50, 100}} {
		s, err := sampler.New(sampler.Config{Rate: 1, Dir: filepath.Join(dir, fmt.Sprintf("c%d", c+1)), Gzip: c == 2,
			Cluster: fmt.Sprintf("c%d", c+1), Region: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		for i := keys[0]; i < keys[1]; i++ {
			key := []byte(fmt.Sprintf("user:%d", i))
			if !s.Sampled(key) {
				t.Fatal("rate 1 must sample every key")
			}
			s.Record(&sampler.Record{TimeUnixNano: base + int64(i), Op: sampler.OpGet, Key: key, ValueSize: 100, Level: uint8(1 + i%2)})
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"*/*.jsonl", "*/*.jsonl.gz"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	if len(files) != 3 {
		t.Fatalf("log files %v", files)
	}
	return files
}

func TestReportCommandJSON(t *testing.T) {
	files := logFiles(t, writeSampleLogs(t))
	var stdout, stderr bytes.Buffer
	args := append([]string{"--format", "json", "--window", "1h"}, files...)
	if err := report.Run(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Fatalf("stderr: %s", stderr.String())
	}
	var doc struct {
		Window     string `json:"window"`
		SampleRate uint64 `json:"sample_rate"`
		Clusters   []struct {
			Name string `json:"name"`
		} `json:"clusters"`
		Families []struct {
			Family               string            `json:"family"`
			Accesses             uint64            `json:"accesses"`
			UniqueKeys           uint64            `json:"unique_keys"`
			ClusterWSSBytes      map[string]uint64 `json:"cluster_wss_bytes"`
			RegionWSSBytes       uint64            `json:"region_wss_bytes"`
			DuplicationFactor    float64           `json:"duplication_factor"`
			RecommendedThreshold int               `json:"recommended_threshold"`
			HitRatio             struct {
				L1, L2, Combined float64
			} `json:"hit_ratio"`
		} `json:"families"`
		PromotionModel []struct {
			Threshold, Trials int
			Probability       float64
		} `json:"promotion_model"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Window != "1h" || doc.SampleRate != 1 || len(doc.Clusters) != 3 || len(doc.Families) != 1 || len(doc.PromotionModel) != 1000 {
		t.Fatalf("report %+v", doc)
	}
	f := doc.Families[0]
	// Keys user:0..9 are 6 bytes, user:10..99 are 7: region 100 keys.
	region := uint64(10*6 + 90*7 + 100*100)
	if f.Family != "user:{N}" || f.Accesses != 200 || f.UniqueKeys != 100 || f.RegionWSSBytes != region || f.DuplicationFactor != 2 {
		t.Fatalf("family %+v", f)
	}
	if f.ClusterWSSBytes["c1"] != region || f.ClusterWSSBytes["c2"]+f.ClusterWSSBytes["c3"] != region {
		t.Fatalf("cluster wss %v", f.ClusterWSSBytes)
	}
	if f.HitRatio.L1 != 0.5 || f.HitRatio.Combined != 1 || f.RecommendedThreshold == 0 {
		t.Fatalf("family %+v", f)
	}
}

func TestReportCommandTextAndBadLines(t *testing.T) {
	dir := writeSampleLogs(t)
	files := logFiles(t, dir)
	// A damaged copy of one log: a garbage line and a cut-off last line.
	raw, err := os.ReadFile(files[0])
	if err != nil || !strings.HasSuffix(files[0], ".jsonl") {
		t.Fatalf("%v %v", files[0], err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	damaged := filepath.Join(t.TempDir(), "damaged.jsonl")
	os.WriteFile(damaged, []byte(lines[0]+"not json\n"+strings.Join(lines[1:len(lines)-2], "")+lines[len(lines)-2][:30]), 0o644)
	var stdout, stderr bytes.Buffer
	// Flags after files, and a directory argument.
	if err := report.Run([]string{damaged, filepath.Join(dir, "c2"), "--window", "all"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	errs := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(errs) != 2 || !strings.HasPrefix(errs[0], damaged+":2: ") || !strings.HasPrefix(errs[1], fmt.Sprintf("%s:%d: truncated", damaged, len(lines))) {
		t.Fatalf("stderr %q", errs)
	}
	out := stdout.String()
	// 99 of c1's 100 records survive, and c2's 50.
	for _, want := range []string{"sample rate 1  records 149  skipped lines 2", "user:{N}", "CLUSTERS", "PROMOTION MODEL"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

func TestReportCommandHTMLToDir(t *testing.T) {
	files := logFiles(t, writeSampleLogs(t))
	outDir := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	if err := report.Run(append([]string{"--format=html", "--out", outDir, "--budget", "1MiB"}, files...), &stdout, &stderr); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	path := filepath.Join(outDir, "report.html")
	if strings.TrimSpace(stdout.String()) != path {
		t.Fatalf("stdout %q", stdout.String())
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := string(page)
	if !strings.Contains(h, "<svg") || strings.Contains(h, "http://") || strings.Contains(h, "https://") || !strings.Contains(h, "user:{N}") {
		t.Fatalf("page:\n%s", h)
	}
}

func TestReportCommandUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"--format", "pdf", "x"}, {"--window", "fortnight", "x"}, {"--budget", "lots", "x"}} {
		var stdout, stderr bytes.Buffer
		if err := report.Run(args, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "usage") {
			t.Errorf("report.Run(%q) = %v", args, err)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := report.Run([]string{"/nonexistent/samples.jsonl"}, &stdout, &stderr); err == nil {
		t.Error("missing file accepted")
	}
}
