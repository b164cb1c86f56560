package hotkeys_test

import (
	"bufio"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

// TestMeasureBoundedReplies is the side-by-side run: one hot
// counter through strata over four memcached, incr with reply, unsplit
// versus split K=8 with exact replies versus split with bounded replies
// (staleness 100ms); same pipelined load for each. It reports increments
// per second, the busiest memcached's CPU per million increments, whether
// replies stayed monotonic per connection, and how far replies lagged the
// increments already acknowledged to the load generator (in increments
// and in time). It runs only with STRATA_MEASURE=1, and fails when the
// final total is not exact or a bounded reply goes down on a connection;
// the throughput and CPU goals are reported, not asserted (the machine is
// shared).
func TestMeasureBoundedReplies(t *testing.T) {
	if os.Getenv("STRATA_MEASURE") != "1" {
		t.Skip("set STRATA_MEASURE=1 to run the hot-key measurement")
	}
	const conns, perConn = 8, 25_008 // perConn a multiple of the batch
	type result struct {
		m   measurement
		lag lagStats
	}
	// Three rounds, interleaved, so that load from elsewhere on the
	// machine hits every configuration alike; the goals are judged on the
	// median round of each.
	results := map[string][]result{}
	t.Log("| round | config | increments/s | busiest memcached CPU s per 1M | busiest share | replies down per connection | lag max / p99 (increments) | lag max / p99 (time) | test process CPU µs/incr | all memcached CPU µs/incr |")
	t.Log("|---|---|---|---|---|---|---|---|---|---|")
	for round := 1; round <= 3; round++ {
		for _, name := range []string{"unsplit", "split exact", "split bounded"} {
			mcs := startMemcached(t, 4)
			cfg := hotkeys.Config{}
			switch name {
			case "split exact":
				cfg.Rules = []hotkeys.Rule{{Prefix: "votes:", Kind: hotkeys.KindCounter, Split: 8}}
			case "split bounded":
				cfg.Rules = []hotkeys.Rule{{Prefix: "votes:", Kind: hotkeys.KindCounter, Split: 8,
					Reply: hotkeys.ReplyBounded, Staleness: 100 * time.Millisecond}}
			}
			s := startStrata(t, strataOpts{l2: mcs, cfg: cfg})
			if err := client(s.addr).Set(&memcache.Item{Key: "votes:1", Value: []byte("0")}); err != nil {
				t.Fatal(err)
			}
			var lag lagStats
			m := measure(t, mcs, "incr_hits", func() {
				lag = incrLoadReplies(t, s.addr, "votes:1", conns, perConn)
			}, conns*perConn)
			if got := mustGet(t, s.addr, "votes:1"); got != strconv.Itoa(conns*perConn) {
				t.Fatalf("%s: counter %s after %d increments", name, got, conns*perConn)
			}
			if name == "split bounded" && lag.down > 0 {
				t.Errorf("bounded replies went down %d times on a connection", lag.down)
			}
			results[name] = append(results[name], result{m, lag})
			t.Logf("| %d | %s | %.0f | %.2f | %.1f%% | %d | %d / %d | %v / %v | %.1f | %.2f |", round, name, m.opsPerSec, m.cpuPerM, 100*m.share,
				lag.down, lag.maxN, lag.p99N, lag.maxT.Round(time.Microsecond), lag.p99T.Round(time.Microsecond), m.procUs, m.allCPUPerM)
			if name == "split bounded" {
				st := s.hk.Stats()
				t.Logf("bounded: %d replies, %d refreshes, %d waits, %d combined into another's operation", st.BoundedReplies, st.BoundedRefreshes, st.BoundedWaits, st.BoundedCombined)
			}
		}
	}
	median := func(name string, f func(measurement) float64) float64 {
		var v []float64
		for _, r := range results[name] {
			v = append(v, f(r.m))
		}
		sort.Float64s(v)
		return v[len(v)/2]
	}
	ops := func(m measurement) float64 { return m.opsPerSec }
	cpu := func(m measurement) float64 { return m.cpuPerM }
	// On a machine the measurement shares, the rate follows whatever else
	// runs; the CPU every increment costs the machine (this process, which
	// is strata and the load generator, plus every memcached) does not.
	machine := func(m measurement) float64 { return m.procUs + m.allCPUPerM }
	for _, name := range []string{"unsplit", "split exact", "split bounded"} {
		t.Logf("median %s: %.0f increments/s, %.2f CPU s per 1M on the busiest memcached, %.2f µs of machine CPU per increment",
			name, median(name, ops), median(name, cpu), median(name, machine))
	}
	t.Logf("bounded vs unsplit (medians): machine CPU per increment %.2f×", median("split bounded", machine)/median("unsplit", machine))
	t.Logf("bounded vs unsplit (medians): increments/s %.2f× (goal ≥ 2×), busiest CPU per 1M %.2f× (goal ≤ 0.5×)",
		median("split bounded", ops)/median("unsplit", ops), median("split bounded", cpu)/median("unsplit", cpu))
}

// lagStats are the replies' lag behind the increments acknowledged
// before each was read: in increments, and in time since the first
// acknowledgement the reply does not count.
type lagStats struct {
	down       int // replies below the previous one on their connection
	maxN, p99N uint64
	maxT, p99T time.Duration
}

// incrLoadReplies is incrLoad with replies read and judged: conns
// connections sending rounds of 16 pipelined incrs.
func incrLoadReplies(t *testing.T, addr, key string, conns, perConn int) lagStats {
	t.Helper()
	const batch = 16
	round := strings.Repeat("incr "+key+" 1\r\n", batch)
	total := conns * perConn
	ackAt := make([]atomic.Int64, total+1) // ackAt[i]: when the i-th acknowledgement was read
	var acked atomic.Int64
	start := time.Now()
	var mu sync.Mutex // guards the merged samples
	var lagsN []uint64
	var lagsT []int64
	var down int
	var wg sync.WaitGroup
	for c := 0; c < conns; c++ {
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		r := bufio.NewReader(nc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last uint64
			var ln []uint64
			var lt []int64
			d := 0
			for i := 0; i < perConn; i += batch {
				_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
				if _, err := nc.Write([]byte(round)); err != nil {
					t.Error(err)
					return
				}
				for j := 0; j < batch; j++ {
					l, err := r.ReadString('\n')
					v, perr := strconv.ParseUint(strings.TrimSpace(l), 10, 64)
					if err != nil || perr != nil {
						t.Errorf("incr load: %q %v", l, err)
						return
					}
					now := int64(time.Since(start))
					before := uint64(acked.Load())
					n := acked.Add(1)
					ackAt[n].Store(now)
					if v < last {
						d++
					}
					last = v
					var lagN uint64
					var lagT int64
					if v < before {
						lagN = before - v
						if at := ackAt[v+1].Load(); at != 0 {
							lagT = now - at
						}
					}
					ln = append(ln, lagN)
					lt = append(lt, lagT)
				}
			}
			mu.Lock()
			lagsN = append(lagsN, ln...)
			lagsT = append(lagsT, lt...)
			down += d
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(lagsN, func(a, b int) bool { return lagsN[a] < lagsN[b] })
	sort.Slice(lagsT, func(a, b int) bool { return lagsT[a] < lagsT[b] })
	st := lagStats{down: down}
	if n := len(lagsN); n > 0 {
		st.maxN, st.p99N = lagsN[n-1], lagsN[n*99/100]
		st.maxT, st.p99T = time.Duration(lagsT[n-1]), time.Duration(lagsT[n*99/100])
	}
	return st
}

// TestMeasureNearCache: one hot read key (100 B, then 10 KB) read from
// one memcached directly, and through strata over four L1 and one L2
// memcached with the key on 8 L1 copies, without and with near = 1s. The
// same driver (getLoad) and connection count serve every configuration;
// the three are measured in interleaved rounds (median of three), so
// that load from elsewhere on the shared machine hits them alike, at 3
// and at 8 connections, to show whether the driver bounds the rates. The
// test process's CPU per get is the driver's alone for memcached direct,
// the driver's plus strata's otherwise. Runs only with STRATA_MEASURE=1.
func TestMeasureNearCache(t *testing.T) {
	if os.Getenv("STRATA_MEASURE") != "1" {
		t.Skip("set STRATA_MEASURE=1 to run the hot-key measurement")
	}
	const gets = 96_000 // per load; a multiple of the batch times every conns
	t.Log("| value | connections | config | gets/s (median of 3) | × one memcached direct | test process CPU µs/get |")
	t.Log("|---|---|---|---|---|---|")
	for _, size := range []int{100, 10_000} {
		val := strings.Repeat("v", size)
		direct := startMemcached(t, 1)[0]
		if err := client(direct.Addr).Set(&memcache.Item{Key: "celeb:1", Value: []byte(val)}); err != nil {
			t.Fatal(err)
		}
		addrs := []string{direct.Addr}
		names := []string{"memcached direct", "8 L1 copies", "8 L1 copies, near 1s"}
		var near *strata
		for _, nearFor := range []time.Duration{0, time.Second} {
			l1, l2 := startMemcached(t, 4), startMemcached(t, 1)
			rule := hotkeys.Rule{Prefix: "celeb:", Kind: hotkeys.KindRead, Split: 8, Near: nearFor}
			s := startStrata(t, strataOpts{l1: l1, l2: l2, cfg: hotkeys.Config{Rules: []hotkeys.Rule{rule}}, threshold: 1})
			if err := client(s.addr).Set(&memcache.Item{Key: "celeb:1", Value: []byte(val)}); err != nil {
				t.Fatal(err)
			}
			addrs = append(addrs, s.addr)
			if nearFor > 0 {
				near = s
				// The key is kept near once the detector finds it hot.
				poll.Until(t, 20*time.Second, "the hot key kept near", func() bool {
					getLoad(t, s.addr, "celeb:1", size, 1, 2000)
					return s.hk.Stats().NearHits > 0
				})
			}
		}
		for _, conns := range []int{3, 8} {
			rates := make([][]float64, len(addrs))
			cpus := make([][]float64, len(addrs))
			for round := 0; round < 3; round++ {
				for i, addr := range addrs {
					var ru0, ru1 syscall.Rusage
					_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
					r := getLoad(t, addr, "celeb:1", size, conns, gets/conns)
					_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
					rates[i] = append(rates[i], r)
					cpus[i] = append(cpus[i], (rusageSeconds(ru1)-rusageSeconds(ru0))/gets*1e6)
				}
			}
			med := func(v []float64) float64 {
				v = append([]float64(nil), v...)
				sort.Float64s(v)
				return v[len(v)/2]
			}
			base := med(rates[0])
			for i := range addrs {
				t.Logf("| %d B | %d | %s | %.0f | %.2f | %.1f |", size, conns, names[i], med(rates[i]), med(rates[i])/base, med(cpus[i]))
			}
		}
		st := near.hk.Stats()
		t.Logf("near: %d hits, %d stores, %d drops", st.NearHits, st.NearStores, st.NearDrops)
	}
}

func rusageSeconds(r syscall.Rusage) float64 {
	return float64(r.Utime.Sec+r.Stime.Sec) + float64(r.Utime.Usec+r.Stime.Usec)/1e6
}

// getLoad reads key with rounds of 16 pipelined gets on conns connections
// and returns gets per second.
func getLoad(t *testing.T, addr, key string, size, conns, perConn int) float64 {
	t.Helper()
	const batch = 16
	round := strings.Repeat("get "+key+"\r\n", batch)
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < conns; c++ {
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		r := bufio.NewReaderSize(nc, 64<<10)
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, size+2)
			for i := 0; i < perConn; i += batch {
				_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
				if _, err := nc.Write([]byte(round)); err != nil {
					t.Error(err)
					return
				}
				for j := 0; j < batch; j++ {
					l, err := r.ReadString('\n')
					if err != nil || !strings.HasPrefix(l, "VALUE ") {
						t.Errorf("get load: %q %v", l, err)
						return
					}
					if _, err := io.ReadFull(r, buf); err != nil {
						t.Error(err)
						return
					}
					if l, err := r.ReadString('\n'); err != nil || l != "END\r\n" {
						t.Errorf("get load: %q %v", l, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return float64(conns*perConn) / time.Since(start).Seconds()
}
