package heavy

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"

	"github.com/strata-cache/strata/bench/workload"
)

const sec = int64(1e9)

// zipfStream draws n keys from a seeded Zipf over keys ranks.
func zipfStream(t testing.TB, n int, keys uint64, s float64, seed uint64) [][]byte {
	t.Helper()
	z, err := workload.NewZipf(keys, s)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, seed^0xabcdef))
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte("user:" + strconv.FormatUint(z.Rank(r), 10))
	}
	return out
}

// exactTop is the oracle: the k most accessed keys by exact count.
func exactTop(stream [][]byte, k int) []string {
	counts := map[string]int{}
	for _, key := range stream {
		counts[string(key)]++
	}
	keys := make([]string, 0, len(counts))
	for key := range counts {
		keys = append(keys, key)
	}
	sort.Slice(keys, func(a, b int) bool {
		if counts[keys[a]] != counts[keys[b]] {
			return counts[keys[a]] > counts[keys[b]]
		}
		return keys[a] < keys[b]
	})
	return keys[:k]
}

// TestRecallZipf: over seeded Zipf streams the detector's top k contains at
// least 95% of the exact top k. Time stands still (one instant), so decay
// plays no part and the oracle is the plain count.
func TestRecallZipf(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		seed uint64
	}{{0.9, 1}, {0.99, 2}, {1.2, 3}} {
		stream := zipfStream(t, 200_000, 100_000, tc.s, tc.seed)
		const k, m = 20, 512
		d, err := New(m, 10*sec, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range stream {
			d.Add(key, 1, 0)
		}
		got := map[string]bool{}
		for _, h := range d.Top(nil, k, 0) {
			got[h.Key] = true
		}
		hit := 0
		for _, key := range exactTop(stream, k) {
			if got[key] {
				hit++
			}
		}
		recall := float64(hit) / k
		t.Logf("zipf s=%.2f: recall %.2f of the top %d with %d counters", tc.s, recall, k, m)
		if recall < 0.95 {
			t.Errorf("zipf s=%.2f: recall %.2f < 0.95", tc.s, recall)
		}
	}
}

// TestCountsBounded: every reported count is at least the true count and
// at most true count + Err (space-saving's guarantee), with time fixed.
func TestCountsBounded(t *testing.T) {
	stream := zipfStream(t, 50_000, 10_000, 1.0, 7)
	exact := map[string]float64{}
	d, _ := New(64, sec, 0)
	for _, key := range stream {
		d.Add(key, 1, 0)
		exact[string(key)]++
	}
	for _, h := range d.Top(nil, 64, 0) {
		if h.Count < exact[h.Key] || h.Count-h.Err > exact[h.Key] {
			t.Errorf("%s: count %.0f err %.0f, exact %.0f", h.Key, h.Count, h.Err, exact[h.Key])
		}
	}
	if got := d.Total(0); got != float64(len(stream)) {
		t.Errorf("total %v, want %d", got, len(stream))
	}
}

// TestDecay: a steady stream of r accesses per second settles at the rate
// r; once it stops, its rate halves every half-life and a newer key
// overtakes it.
func TestDecay(t *testing.T) {
	const half = 2 * sec
	d, _ := New(8, half, 0)
	a, b := []byte("a"), []byte("b")
	// 1000 accesses/s to a for 60 s (30 half-lives: the steady state).
	var now int64
	for i := 0; i < 60_000; i++ {
		now = int64(i) * sec / 1000
		d.Add(a, 1, now)
	}
	top := d.Top(nil, 1, now)
	if len(top) != 1 || top[0].Key != "a" || top[0].Rate < 990 || top[0].Rate > 1010 {
		t.Fatalf("steady rate: got %+v, want a at about 1000/s", top)
	}
	r0 := top[0].Rate
	top = d.Top(nil, 1, now+half)
	if got := top[0].Rate; got < r0/2*0.999 || got > r0/2*1.001 {
		t.Errorf("one half-life later: rate %.1f, want %.1f", got, r0/2)
	}
	// b at 100/s for 20 half-lives overtakes a, which went silent.
	start := now + half
	for i := 0; i < 4_000; i++ {
		now = start + int64(i)*sec/100
		d.Add(b, 1, now)
	}
	top = d.Top(nil, 2, now)
	if top[0].Key != "b" || top[0].Rate < 95 || top[1].Key != "a" || top[1].Rate > 1 {
		t.Errorf("after a cooled down: %+v", top)
	}
}

// TestRescale: running for thousands of half-lives keeps counts finite
// and correct relative to each other.
func TestRescale(t *testing.T) {
	d, _ := New(4, sec, 0)
	for i := int64(0); i < 5_000; i++ {
		d.Add([]byte("x"), 1, i*sec)
		if i%2 == 0 {
			d.Add([]byte("y"), 1, i*sec)
		}
	}
	top := d.Top(nil, 2, 5_000*sec)
	if top[0].Key != "x" || top[1].Key != "y" || top[0].Count <= top[1].Count || top[0].Count > 4 {
		t.Errorf("after 5000 half-lives: %+v", top)
	}
}

// TestIgnoresOversizeAndCollisions: empty and oversize keys are not
// tracked, and the table never grows past m.
func TestBounds(t *testing.T) {
	d, _ := New(3, sec, 0)
	d.Add(nil, 1, 0)
	d.Add(make([]byte, MaxKey+1), 1, 0)
	for i := 0; i < 100; i++ {
		d.Add([]byte(strconv.Itoa(i)), 1, 0)
	}
	if n := len(d.Top(nil, 100, 0)); n != 3 {
		t.Errorf("%d entries, want 3", n)
	}
	if _, err := New(0, sec, 0); err == nil {
		t.Error("New accepted 0 counters")
	}
	if _, err := New(4, 0, 0); err == nil {
		t.Error("New accepted a zero half-life")
	}
}

// BenchmarkAdd is the cost of one access on a Zipf stream with a warm
// table: the detector's share of a request's CPU.
func BenchmarkAdd(b *testing.B) {
	stream := zipfStream(b, 1<<16, 1_000_000, 0.99, 9)
	d, _ := New(128, 10*sec, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Add(stream[i&(1<<16-1)], 1, int64(i)*1000)
	}
}

// FuzzDetector: any sequence of keys and (possibly backwards) times keeps
// the table within m entries, its counts finite and bounded below by
// their errors, and Top sorted.
func FuzzDetector(f *testing.F) {
	f.Add([]byte("a\x00b\x00a\x00c"), int64(0), int64(1))            // a few keys at one instant
	f.Add([]byte("x\x00x\x00x\x00y\x00z\x00w"), int64(5), int64(-3)) // time running backwards
	f.Add([]byte("\x00\x00"), int64(1<<40), int64(1<<40))            // empty keys, huge times
	f.Fuzz(func(t *testing.T, stream []byte, start, step int64) {
		d, err := New(4, sec, start)
		if err != nil {
			t.Fatal(err)
		}
		now := start
		for _, k := range bytes.Split(stream, []byte{0}) {
			d.Add(k, 1, now)
			now += step % (1000 * sec)
		}
		top := d.Top(nil, 10, now)
		if len(top) > 4 {
			t.Fatalf("%d entries", len(top))
		}
		for i, h := range top {
			if math.IsNaN(h.Count) || math.IsInf(h.Count, 0) || h.Count < h.Err || h.Err < 0 {
				t.Fatalf("entry %+v", h)
			}
			if i > 0 && top[i-1].Count < h.Count {
				t.Fatalf("Top not sorted: %+v", top)
			}
		}
	})
}

// BenchmarkAddCoarseClock is BenchmarkAdd with the serving clock's
// one-second resolution, as cmd/strata runs it.
func BenchmarkAddCoarseClock(b *testing.B) {
	stream := zipfStream(b, 1<<16, 1_000_000, 0.99, 9)
	d, _ := New(128, 10*sec, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.Add(stream[i&(1<<16-1)], 1, int64(i>>20)*sec)
	}
}

// TestYoungKeyRate: a key that turned hot a moment ago reads at its
// rate, not at the fraction of it that a long-decayed count would give;
// a burst reads as its size spread over MinAge.
func TestYoungKeyRate(t *testing.T) {
	const half = 5 * sec
	d, _ := New(8, half, 0)
	hot, burst := []byte("hot"), []byte("burst")
	// 1000 accesses/s to hot for 1 s, starting at 10 s.
	start := 10 * sec
	var now int64
	for i := 0; i < 1000; i++ {
		now = start + int64(i)*sec/1000
		d.Add(hot, 1, now)
	}
	// 600 accesses to burst within one millisecond.
	for i := 0; i < 600; i++ {
		d.Add(burst, 1, now+int64(i)*sec/600_000)
	}
	now += sec / 1000
	rates := map[string]float64{}
	for _, h := range d.Top(nil, 2, now) {
		rates[h.Key] = h.RateLow
	}
	if r := rates["hot"]; r < 990 || r > 1010 {
		t.Errorf("hot after 1 s at 1000/s: rate %.1f, want about 1000 (a long window gives %.1f)",
			r, 1000*Window(now-start, half)/Window(100*half, half))
	}
	// 600 accesses at once weigh what a steady 643/s reaches in MinAge
	// (Window(MinAge) is about 0.933 s at this half-life).
	if r := rates["burst"]; r < 640 || r > 646 {
		t.Errorf("600 accesses in 1 ms: rate %.1f, want about 643", r)
	}
	// Half a second into a stream, the rate reads low, never high.
	d2, _ := New(8, half, 0)
	for i := 0; i < 500; i++ {
		d2.Add(hot, 1, int64(i)*sec/1000)
	}
	if r := d2.Top(nil, 1, sec/2)[0].RateLow; r < 500 || r > 540 {
		t.Errorf("0.5 s at 1000/s: rate %.1f, want about 518 (its count over MinAge's window)", r)
	}
}
