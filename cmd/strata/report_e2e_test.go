package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// This file is the end-to-end check of the sampler and `strata report`:
// three `strata serve` processes, clusters c1, c2 and c3 of region r1 over
// one L2 memcached, each sampling every key (rate 1) into its own log; the
// report over the three logs must give exactly the working sets and
// duplication factors the test computes from the requests it sent.

// e2eFamily is one key family of the workload.
type e2eFamily struct {
	name           string // as the report names it
	format         string // the key, %d being its number
	keys           int
	minVal, maxVal int    // value sizes; 0 and 0: never stored, every read misses
	spread         [3]int // percent of keys accessed by three, two and one cluster
}

var e2eFamilies = []e2eFamily{
	{name: "user:{N}:profile", format: "user:%d:profile", keys: 150, minVal: 150, maxVal: 600, spread: [3]int{40, 30, 30}},
	{name: "photo:{N}", format: "photo:%d", keys: 100, minVal: 2000, maxVal: 6000, spread: [3]int{10, 20, 70}},
	{name: "feed:{N}:items", format: "feed:%d:items", keys: 150, minVal: 20, maxVal: 120, spread: [3]int{70, 20, 10}},
	{name: "session:{N}", format: "session:%d", keys: 60, spread: [3]int{30, 30, 40}},
}

var e2eClusters = [3]string{"c1", "c2", "c3"}

// e2eOp is one request of the workload, sent to one cluster's strata.
type e2eOp struct {
	cluster int
	fam     int
	key     string
	value   string // what a set stores and a read of a stored key returns
	set     bool
	gets    bool // read with gets rather than get
}

// e2eWorkload is the seeded request stream. Every key has one value, so
// one size, in every cluster, as the report's definitions assume. Each
// key is accessed by one, two or three clusters; of a stored key's
// clusters the first always sets it and the others sometimes do, and
// every cluster that does not set a key reads it at least once. All sets
// come before all reads, so every read of a stored key must hit, in L1
// or in the shared L2.
func e2eWorkload(seed uint64) []e2eOp {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	var sets, reads []e2eOp
	for fi, f := range e2eFamilies {
		used := map[int]bool{}
		for range f.keys {
			n := rng.IntN(10_000_000)
			for used[n] {
				n = rng.IntN(10_000_000)
			}
			used[n] = true
			key := fmt.Sprintf(f.format, n)
			var value string
			if f.maxVal > 0 {
				value = e2eValue(rng, f.minVal+rng.IntN(f.maxVal-f.minVal+1))
			}
			k, p := 1, rng.IntN(100)
			switch {
			case p < f.spread[0]:
				k = 3
			case p < f.spread[0]+f.spread[1]:
				k = 2
			}
			for j, c := range rng.Perm(3)[:k] {
				writer := value != "" && (j == 0 || rng.IntN(3) == 0)
				n := rng.IntN(5)
				if !writer && n == 0 {
					n = 1 + rng.IntN(4)
				}
				if writer {
					sets = append(sets, e2eOp{cluster: c, fam: fi, key: key, value: value, set: true})
				}
				for range n {
					reads = append(reads, e2eOp{cluster: c, fam: fi, key: key, value: value, gets: rng.IntN(2) == 0})
				}
			}
		}
	}
	rng.Shuffle(len(sets), func(i, j int) { sets[i], sets[j] = sets[j], sets[i] })
	rng.Shuffle(len(reads), func(i, j int) { reads[i], reads[j] = reads[j], reads[i] })
	return append(sets, reads...)
}

// e2eValue is n printable bytes without spaces or line ends.
func e2eValue(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(rng.IntN(26))
	}
	return string(b)
}

// e2eExpected is what the report must say about one family, computed from
// the requests sent: size(key) = len(key) + len(the value set for it),
// 0 for a key never set.
type e2eExpected struct {
	accesses, reads, hits uint64
	clusterWSS            map[string]uint64
	regionWSS, uniqueKeys uint64
	duplication           float64
}

func e2eExpect(sent []e2eOp) (map[string]*e2eExpected, [3]uint64) {
	var perCluster [3]uint64
	stored := map[string]int{}
	for _, op := range sent {
		if op.set {
			stored[op.key] = len(op.value)
		}
	}
	accessed := make([]map[string][3]bool, len(e2eFamilies))
	out := map[string]*e2eExpected{}
	for fi, f := range e2eFamilies {
		accessed[fi] = map[string][3]bool{}
		out[f.name] = &e2eExpected{clusterWSS: map[string]uint64{}}
	}
	for _, op := range sent {
		perCluster[op.cluster]++
		x := out[e2eFamilies[op.fam].name]
		x.accesses++
		if !op.set {
			x.reads++
			if _, ok := stored[op.key]; ok {
				x.hits++
			}
		}
		a := accessed[op.fam][op.key]
		a[op.cluster] = true
		accessed[op.fam][op.key] = a
	}
	for fi, f := range e2eFamilies {
		x := out[f.name]
		var sum uint64
		for key, in := range accessed[fi] {
			size := uint64(len(key) + stored[key])
			x.uniqueKeys++
			x.regionWSS += size
			for c, ok := range in {
				if ok {
					x.clusterWSS[e2eClusters[c]] += size
					sum += size
				}
			}
		}
		x.duplication = float64(sum) / float64(x.regionWSS)
	}
	return out, perCluster
}

// e2eReport is the part of the JSON report this test reads, by the
// documented field names.
type e2eReport struct {
	Window     string `json:"window"`
	SampleRate uint64 `json:"sample_rate"`
	Records    int64  `json:"records"`
	Skipped    int64  `json:"skipped_lines"`
	Clusters   []struct {
		Name     string `json:"name"`
		Cluster  string `json:"cluster"`
		Region   string `json:"region"`
		Accesses uint64 `json:"accesses"`
	} `json:"clusters"`
	Families []struct {
		Family            string            `json:"family"`
		Accesses          uint64            `json:"accesses"`
		Reads             uint64            `json:"reads"`
		UniqueKeys        uint64            `json:"unique_keys"`
		ClusterWSSBytes   map[string]uint64 `json:"cluster_wss_bytes"`
		RegionWSSBytes    uint64            `json:"region_wss_bytes"`
		DuplicationFactor float64           `json:"duplication_factor"`
		HitRatio          struct {
			Combined float64 `json:"combined"`
		} `json:"hit_ratio"`
	} `json:"families"`
	Warnings []string `json:"warnings"`
}

// e2eRead sends get or gets for op.key on tc and checks the reply: the
// value when the key was stored, a miss otherwise.
func e2eRead(t *testing.T, tc *mctext.Conn, op e2eOp) {
	t.Helper()
	verb := "get"
	if op.gets {
		verb = "gets"
	}
	lines := tc.Do(verb+" "+op.key+"\r\n", mctext.EndsAtEND)
	if op.value == "" {
		if len(lines) != 1 || lines[0] != "END" {
			t.Fatalf("%s: %s %s: %q, want a miss", e2eClusters[op.cluster], verb, op.key, lines)
		}
		return
	}
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "VALUE "+op.key+" ") || lines[1] != op.value {
		t.Fatalf("%s: %s %s: %.200q, want its %d-byte value", e2eClusters[op.cluster], verb, op.key, lines, len(op.value))
	}
}

// e2eLogs lists the finished sample logs in dir and fails t if a file is
// still unfinished.
func e2eLogs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		switch n := e.Name(); {
		case strings.HasSuffix(n, ".part"):
			t.Errorf("%s: %s left unfinished after a clean exit", filepath.Base(dir), n)
		case strings.HasSuffix(n, ".jsonl"), strings.HasSuffix(n, ".jsonl.gz"):
			files = append(files, filepath.Join(dir, n))
		}
	}
	return files
}

func TestReportOverThreeStrataProcesses(t *testing.T) {
	building := time.Now()
	bin := testbin.BuildStrata(t)
	t.Logf("built in %v", time.Since(building).Round(time.Millisecond))
	l2 := memcachedtest.Start(t)

	// c1 writes one plain file, c2 rotates into several, c3 compresses.
	extra := [3]string{"", "rotate_size = \"32KiB\"\n", "gzip = true\n"}
	var procs [3]*process
	var dirs [3]string
	var conns [3]*mctext.Conn
	for c, name := range e2eClusters {
		dirs[c] = t.TempDir()
		cfg := fmt.Sprintf("[server]\ncluster = %q\nregion = \"r1\"\n[l1]\nkind = \"embedded\"\nmemory = \"16MiB\"\n"+
			"[l2]\nservers = [%q]\n[sampler]\nrate = 1\ndir = %q\n%s", name, l2.Addr, dirs[c], extra[c])
		procs[c] = startProcess(t, bin, writeFile(t, name+".toml", cfg))
		conns[c] = mctext.Dial(t, procs[c].listen)
	}

	ops := e2eWorkload(20260501)
	start := time.Now()
	for _, op := range ops {
		if op.set {
			if r := conns[op.cluster].Set(op.key, op.value, 0); r != "STORED" {
				t.Fatalf("%s: set %s: %q", e2eClusters[op.cluster], op.key, r)
			}
			continue
		}
		e2eRead(t, conns[op.cluster], op)
	}
	want, perCluster := e2eExpect(ops)
	t.Logf("%d requests (c1 %d, c2 %d, c3 %d) in %v", len(ops), perCluster[0], perCluster[1], perCluster[2], time.Since(start).Round(time.Millisecond))

	// Every access was accepted by its sampler and none dropped, so what
	// the logs lack after the exit was lost in the flush.
	for c, p := range procs {
		var st struct{ Records, Dropped uint64 }
		poll.Until(t, 10*time.Second, e2eClusters[c]+" sampler records", func() bool {
			code, body := httpDo(t, "GET", "http://"+p.admin+"/admin/v1/sampler", "", "")
			if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
				t.Fatalf("%s: GET /admin/v1/sampler: %d %s", e2eClusters[c], code, body)
			}
			return st.Records >= perCluster[c] || st.Dropped > 0
		})
		if st.Records != perCluster[c] || st.Dropped != 0 {
			t.Fatalf("%s: sampler accepted %d records and dropped %d; %d accesses were sent", e2eClusters[c], st.Records, st.Dropped, perCluster[c])
		}
	}

	stopping := time.Now()
	for _, p := range procs {
		p.signal(t, syscall.SIGTERM)
	}
	var files []string
	for c, p := range procs {
		if code := p.wait(t, 20*time.Second); code != 0 {
			t.Fatalf("%s: exit status %d after SIGTERM\n%s", e2eClusters[c], code, p.stderr.String())
		}
		fs := e2eLogs(t, dirs[c])
		switch {
		case len(fs) == 0:
			t.Fatalf("%s: no sample log after a clean exit\n%s", e2eClusters[c], p.stderr.String())
		case c == 1 && len(fs) < 2:
			t.Errorf("c2: %d log file, want it rotated at 32KiB into several", len(fs))
		case c == 2 && !strings.HasSuffix(fs[0], ".jsonl.gz"):
			t.Errorf("c3: %s, want gzip", filepath.Base(fs[0]))
		}
		files = append(files, fs...)
	}
	t.Logf("stopped in %v; %d log files", time.Since(stopping).Round(time.Millisecond), len(files))

	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"report", "--format", "json", "--window", "all"}, files...), &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("strata report: exit %d\n%s", code, stderr.String())
	}
	var got e2eReport
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("report JSON: %v\n%.500s", err, stdout.String())
	}

	if got.Window != "all" || got.SampleRate != 1 || got.Skipped != 0 || got.Records != int64(len(ops)) || len(got.Warnings) != 0 {
		t.Errorf("report: window %q, sample rate %d, %d skipped lines, %d records (sent %d), warnings %q",
			got.Window, got.SampleRate, got.Skipped, got.Records, len(ops), got.Warnings)
	}
	var names []string
	for _, cl := range got.Clusters {
		names = append(names, cl.Name)
	}
	if !slices.Equal(names, e2eClusters[:]) {
		t.Fatalf("clusters %q, want %q", names, e2eClusters)
	}
	for c, cl := range got.Clusters {
		if cl.Cluster != e2eClusters[c] || cl.Region != "r1" || cl.Accesses != perCluster[c] {
			t.Errorf("cluster %s: %+v, want region r1 and %d accesses", e2eClusters[c], cl, perCluster[c])
		}
	}

	var fams []string
	for _, f := range got.Families {
		fams = append(fams, f.Family)
		x, ok := want[f.Family]
		if !ok {
			continue
		}
		if rel := math.Abs(f.DuplicationFactor-x.duplication) / x.duplication; rel > 1e-9 {
			t.Errorf("%s: duplication factor %.12f, want %.12f", f.Family, f.DuplicationFactor, x.duplication)
		}
		if !maps.Equal(f.ClusterWSSBytes, x.clusterWSS) || f.RegionWSSBytes != x.regionWSS {
			t.Errorf("%s: cluster WSS %v region %d, want %v region %d", f.Family, f.ClusterWSSBytes, f.RegionWSSBytes, x.clusterWSS, x.regionWSS)
		}
		if f.Accesses != x.accesses || f.Reads != x.reads || f.UniqueKeys != x.uniqueKeys {
			t.Errorf("%s: %d accesses, %d reads, %d keys, want %d, %d, %d", f.Family, f.Accesses, f.Reads, f.UniqueKeys, x.accesses, x.reads, x.uniqueKeys)
		}
		if h := float64(x.hits) / float64(x.reads); math.Abs(f.HitRatio.Combined-h) > 1e-12 {
			t.Errorf("%s: combined hit ratio %v, want %v", f.Family, f.HitRatio.Combined, h)
		}
		t.Logf("%-17s duplication %.6f  region %7d B  clusters %v", f.Family, f.DuplicationFactor, f.RegionWSSBytes, f.ClusterWSSBytes)
	}
	var wantFams []string
	for name := range want {
		wantFams = append(wantFams, name)
	}
	sort.Strings(fams)
	sort.Strings(wantFams)
	if !slices.Equal(fams, wantFams) {
		t.Errorf("families %q, want %q", fams, wantFams)
	}
}
