package sampler

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/strata-cache/strata/sampler/report"
	"github.com/strata-cache/strata/sampler/samplelog"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

func newSampler(t testing.TB, cfg Config) *Sampler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// KeyHash is standard XXH64, so other tools can reproduce the sample.
func TestKeyHashIsXXH64(t *testing.T) {
	for _, c := range []struct {
		seed uint64
		in   string
		want uint64
	}{
		{0, "", 0xef46db3751d8e999},
		{0, "abc", 0x44bc2cf5ad770999},
		{1, "", 0xd5afba1336a3be4b},
	} {
		if got := KeyHash(c.seed, []byte(c.in)); got != c.want {
			t.Errorf("KeyHash(%d, %q) = %#x, want %#x", c.seed, c.in, got, c.want)
		}
	}
}

// The one-shot hash equals the library's seeded streaming digest for every
// length around the block boundaries.
func TestKeyHashMatchesDigest(t *testing.T) {
	buf := make([]byte, 300)
	for i := range buf {
		buf[i] = byte(i*131 + 7)
	}
	for _, seed := range []uint64{0, 1, DefaultSeed, ^uint64(0)} {
		for n := 0; n <= len(buf); n++ {
			d := xxhash.NewWithSeed(seed)
			d.Write(buf[:n])
			if got, want := KeyHash(seed, buf[:n]), d.Sum64(); got != want {
				t.Fatalf("seed %#x len %d: %#x want %#x", seed, n, got, want)
			}
		}
	}
}

func TestSampledFollowsRate(t *testing.T) {
	s := newSampler(t, Config{Rate: 100})
	n := 0
	for i := 0; i < 100000; i++ {
		key := []byte(fmt.Sprintf("user:%d", i))
		got := s.Sampled(key)
		if want := KeyHash(DefaultSeed, key)%100 == 0; got != want {
			t.Fatalf("Sampled(%s) = %v, want %v", key, got, want)
		}
		if got {
			n++
		}
	}
	// Binomial(100000, 1/100): mean 1000, sd ≈ 31.5.
	if n < 850 || n > 1150 {
		t.Fatalf("%d of 100000 keys sampled at rate 100", n)
	}
	s.SetRate(1)
	if !s.Sampled([]byte("anything")) || s.Rate() != 1 {
		t.Fatal("rate 1 must sample every key")
	}
	s.SetRate(0)
	if s.Sampled([]byte("anything")) {
		t.Fatal("rate 0 must sample nothing")
	}
	// A different seed picks a different sample.
	o := newSampler(t, Config{Rate: 100, Seed: 12345})
	s.SetRate(100)
	same := 0
	for i := 0; i < 100000; i++ {
		key := []byte(fmt.Sprintf("user:%d", i))
		if s.Sampled(key) && o.Sampled(key) {
			same++
		}
	}
	if same > 40 {
		t.Fatalf("%d keys sampled under both seeds (expected about 10)", same)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []Config{{RingSize: 1000}, {RingSize: 1}, {Window: -1}, {Families: []FamilyRule{{Match: "(", Family: "x"}}}} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	d := DefaultConfig()
	if d.Rate != DefaultRate || d.Seed != DefaultSeed || d.RingSize != DefaultRingSize || d.Window != DefaultWindow || d.Cluster != "default" {
		t.Fatalf("defaults %+v", d)
	}
}

func TestSampledAndRecordDoNotAllocate(t *testing.T) {
	s := newSampler(t, Config{Rate: 1, RingSize: 1024})
	key := []byte("photos:foobar:12345:c1")
	rec := Record{Op: OpGet, Key: key, ValueSize: 100, Level: 2, Promoted: true}
	if a := testing.AllocsPerRun(1000, func() { s.Sampled(key) }); a != 0 {
		t.Errorf("Sampled: %v allocs", a)
	}
	// 1001 records into 1024 slots, then more into a full ring: both paths.
	if a := testing.AllocsPerRun(1000, func() { s.Record(&rec) }); a != 0 {
		t.Errorf("Record: %v allocs", a)
	}
	if a := testing.AllocsPerRun(1000, func() { s.Record(&rec) }); a != 0 {
		t.Errorf("Record on a full ring: %v allocs", a)
	}
	if st := s.Stats(); st.Recorded != 1024 || st.Dropped != 2002-1024 {
		t.Fatalf("stats %+v", st)
	}
}

// A full ring drops and counts without blocking; Stop drains what it holds.
func TestFullRingDropsThenStopDrains(t *testing.T) {
	dir := t.TempDir()
	s := newSampler(t, Config{Rate: 1, RingSize: 8, Dir: dir, Cluster: "c1", Region: "r1"})
	for i := 0; i < 20; i++ {
		s.Record(&Record{TimeUnixNano: t0.UnixNano() + int64(i)*1000, Op: OpGet, Key: []byte(fmt.Sprintf("k:%d", i)), ValueSize: 10, Level: 1})
	}
	st := s.Stats()
	if st.Recorded != 8 || st.Dropped != 12 || st.RingLen != 8 || st.Written != 0 {
		t.Fatalf("before stop: %+v", st)
	}
	if err := s.Stop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx(t)); err != nil { // idempotent
		t.Fatal(err)
	}
	s.Record(&Record{Op: OpGet, Key: []byte("late")})
	st = s.Stats()
	if st.Drained != 8 || st.Written != 8 || st.Dropped != 13 || st.LogFiles != 1 || st.LogErrors != 0 {
		t.Fatalf("after stop: %+v", st)
	}
	var keys []string
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 || !strings.HasPrefix(filepath.Base(files[0]), "strata-c1-r1-") {
		t.Fatalf("files %v", files)
	}
	samplelog.ScanFile(files[0], func(e *samplelog.Entry) { keys = append(keys, e.Key) }, func(le *samplelog.LineError) { t.Error(le) })
	if strings.Join(keys, ",") != "k:0,k:1,k:2,k:3,k:4,k:5,k:6,k:7" {
		t.Fatalf("logged %v", keys)
	}
}

// Producers on several goroutines while the drainer runs: every accepted
// record reaches the log exactly once.
func TestConcurrentProducersReachTheLog(t *testing.T) {
	dir := t.TempDir()
	s := newSampler(t, Config{Rate: 1, RingSize: 1 << 15, Dir: dir, Gzip: true, Cluster: "c2", Region: "r1"})
	s.Start()
	const producers, per = 4, 5000
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				s.Record(&Record{TimeUnixNano: t0.UnixNano() + int64(i), Op: OpSet, Key: []byte(fmt.Sprintf("p%d:%d", p, i)), ValueSize: 7})
			}
		}()
	}
	wg.Wait()
	if err := s.Stop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Recorded+st.Dropped != producers*per || st.Written != st.Recorded || st.Drained != st.Recorded {
		t.Fatalf("stats %+v", st)
	}
	seen := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	for _, f := range files {
		samplelog.ScanFile(f, func(e *samplelog.Entry) {
			seen[e.Key]++
			if e.Cluster != "c2" || e.Region != "r1" || e.SampleRate != 1 || e.Op != OpSet || e.ValueSize != 7 {
				t.Errorf("entry %+v", *e)
			}
		}, func(le *samplelog.LineError) { t.Error(le) })
	}
	if uint64(len(seen)) != st.Written {
		t.Fatalf("%d distinct keys in the log, %d written", len(seen), st.Written)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("%s logged %d times", k, n)
		}
	}
}

func TestLiveWindowAndSync(t *testing.T) {
	clk := &clock{now: t0}
	s := newSampler(t, Config{Rate: 1, Window: time.Minute, Now: clk.Now, Cluster: "c1", Region: "r1",
		Families: []FamilyRule{{Match: `^tl:(\w+):`, Family: "timeline:$1"}}})
	s.Start()
	rec := func(d time.Duration, key string, level uint8) {
		s.Record(&Record{TimeUnixNano: t0.Add(d).UnixNano(), Op: OpGet, Key: []byte(key), ValueSize: 90, Level: level})
	}
	rec(0, "tl:home:1", 1)
	rec(time.Second, "tl:home:1", 2)
	rec(2*time.Second, "tl:home:2", 0)
	rec(3*time.Second, "user:77", 1)
	s.Record(&Record{Op: OpSet, Key: []byte("user:78"), ValueSize: 5}) // stamped by the drainer
	if err := s.Sync(ctx(t)); err != nil {
		t.Fatal(err)
	}
	r := s.Live()
	if r.Records != 5 || r.Window != "1m0s" || len(r.Families) != 2 || len(r.Clusters) != 1 || r.Clusters[0].Name != "c1" {
		t.Fatalf("live %+v", r)
	}
	byName := map[string]report.Family{}
	for _, f := range r.Families {
		byName[f.Family] = f
	}
	tl := byName["timeline:home"]
	if tl.Accesses != 3 || tl.UniqueKeys != 2 || tl.RegionWSSBytes != 2*(9+90) || tl.DuplicationFactor != 1 {
		t.Fatalf("timeline family %+v", tl)
	}
	if tl.HitRatio.L1 != 1.0/3 || tl.HitRatio.L2 != 0.5 {
		t.Fatalf("hit ratio %+v", tl.HitRatio)
	}
	if u := byName["user:{N}"]; u.Accesses != 2 || u.RegionWSSBytes != (7+90)+(7+5) {
		t.Fatalf("user family %+v", u)
	}
	// Two minutes later nothing is in the window, and the buffer is freed
	// on the next drain pass.
	clk.Set(t0.Add(2 * time.Minute))
	if r := s.Live(); r.Records != 0 {
		t.Fatalf("expired records still reported: %d", r.Records)
	}
	rec(2*time.Minute, "user:1", 0)
	s.Sync(ctx(t))
	if st := s.Stats(); st.LiveRecords != 1 {
		t.Fatalf("live buffer holds %d records", st.LiveRecords)
	}
}

func TestLiveBufferBounded(t *testing.T) {
	s := newSampler(t, Config{Rate: 1, MaxLiveRecords: 3, Now: func() time.Time { return t0 }})
	for i := 0; i < 5; i++ {
		s.Record(&Record{TimeUnixNano: t0.UnixNano() - int64(i), Op: OpGet, Key: []byte(fmt.Sprintf("k%d", i))})
	}
	s.Sync(ctx(t))
	if st := s.Stats(); st.LiveRecords != 3 || st.LiveEvicted != 2 {
		t.Fatalf("stats %+v", st)
	}
	if r := s.Live(); r.Records != 3 || r.Overall.UniqueKeys != 3 {
		t.Fatalf("live %+v", r.Overall)
	}
}

func TestLongKeyIsCutAndCounted(t *testing.T) {
	dir := t.TempDir()
	s := newSampler(t, Config{Rate: 1, Dir: dir})
	long := strings.Repeat("x", 300)
	s.Record(&Record{TimeUnixNano: t0.UnixNano(), Op: OpGet, Key: []byte(long)})
	s.Stop(ctx(t))
	if st := s.Stats(); st.KeysTruncated != 1 {
		t.Fatalf("stats %+v", st)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var got []samplelog.Entry
	samplelog.ScanFile(files[0], func(e *samplelog.Entry) { got = append(got, *e) }, func(le *samplelog.LineError) { t.Error(le) })
	if len(got) != 1 || len(got[0].Key) != MaxKeyLen || got[0].KeySize != 300 {
		t.Fatalf("entry %+v", got)
	}
}

// Rotation by size and by age through the sampler, with gzip, and the
// report reads every file back.
func TestSamplerRotationReadBack(t *testing.T) {
	dir := t.TempDir()
	clk := &clock{now: t0}
	s := newSampler(t, Config{Rate: 1, Dir: dir, Gzip: true, MaxFileBytes: 20 << 10, MaxFileAge: time.Hour, Now: clk.Now, Cluster: "c1", Region: "r1"})
	s.Start()
	const n = 1000
	for i := 0; i < n; i++ {
		if i == n/2 {
			s.Sync(ctx(t))
			clk.Set(t0.Add(time.Hour)) // the next record opens a new file
		}
		s.Record(&Record{TimeUnixNano: t0.UnixNano() + int64(i)*1000, Op: OpGet, Key: []byte(fmt.Sprintf("obj:%d", i%300)), ValueSize: 100, Level: 2})
	}
	if err := s.Stop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl.gz"))
	st := s.Stats()
	if len(files) < 4 || uint64(len(files)) != st.LogFiles || st.Written != n {
		t.Fatalf("%d files, stats %+v", len(files), st)
	}
	r, err := report.FromFiles(files, 0, report.Options{}, func(le *samplelog.LineError) { t.Error(le) })
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != n || r.Overall.UniqueKeys != 300 || r.Overall.RegionWSSBytes != 300*100+(10*5+90*6+200*7) {
		t.Fatalf("report over rotated files: records %d keys %d wss %d", r.Records, r.Overall.UniqueKeys, r.Overall.RegionWSSBytes)
	}
}
