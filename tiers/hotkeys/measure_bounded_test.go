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
	"github.com/strata-cache/strata/internal/testbin"
)

// TestMeasureBoundedReplies is the side-by-side run: one hot
// counter through a strata process over four memcached, incr with reply,
// unsplit versus split K=8 with exact replies versus split with bounded
// replies (staleness 100ms); the same pipelined load for each, at 16 and
// at 128 increments per batch. It reports increments per second, the
// busiest memcached's CPU per million increments, the CPU every increment
// costs strata, the load generator and all memcached, whether replies
// stayed monotonic per connection, and how far replies lagged the
// increments already acknowledged to the load generator (in increments
// and in time). It runs only with STRATA_MEASURE=1, and fails when the
// final total is not exact or a bounded reply goes down on a connection;
// the throughput and CPU goals are reported, not asserted (the machine is
// shared).
func TestMeasureBoundedReplies(t *testing.T) {
	if os.Getenv("STRATA_MEASURE") != "1" {
		t.Skip("set STRATA_MEASURE=1 to run the hot-key measurement")
	}
	const conns, perConn = 8, 25_088 // perConn a multiple of every batch
	type result struct {
		m   measurement
		lag lagStats
	}
	const split = "[[hotkeys.rule]]\nprefix = \"votes:\"\nkind = \"counter\"\nsplit = 8\n"
	rules := map[string]string{
		"unsplit":       "",
		"split exact":   split,
		"split bounded": split + "reply = \"bounded\"\nstaleness = \"100ms\"\n",
	}
	bin := testbin.BuildStrata(t)
	for _, batch := range []int{16, 128} {
		// Three rounds, interleaved, so that load from elsewhere on the
		// machine hits every configuration alike; the goals are judged on
		// the median round of each.
		results := map[string][]result{}
		t.Logf("batches of %d pipelined increments", batch)
		t.Log("| round | config | increments/s | busiest memcached CPU s per 1M | busiest share | replies down per connection | lag max / p99 (increments) | lag max / p99 (time) | strata CPU µs/incr | load generator CPU µs/incr | all memcached CPU µs/incr |")
		t.Log("|---|---|---|---|---|---|---|---|---|---|---|")
		for round := 1; round <= 3; round++ {
			for _, name := range []string{"unsplit", "split exact", "split bounded"} {
				mcs := startMemcached(t, 4)
				s := startStrataProc(t, bin, nil, mcs, rules[name])
				if err := client(s.addr).Set(&memcache.Item{Key: "votes:1", Value: []byte("0")}); err != nil {
					t.Fatal(err)
				}
				var lag lagStats
				m := measureProc(t, s, mcs, "incr_hits", func() {
					lag = incrLoadReplies(t, s.addr, "votes:1", conns, perConn, batch)
				}, conns*perConn)
				if got := mustGet(t, s.addr, "votes:1"); got != strconv.Itoa(conns*perConn) {
					t.Fatalf("%s: counter %s after %d increments", name, got, conns*perConn)
				}
				if name == "split bounded" && lag.down > 0 {
					t.Errorf("bounded replies went down %d times on a connection", lag.down)
				}
				results[name] = append(results[name], result{m, lag})
				t.Logf("| %d | %s | %.0f | %.2f | %.1f%% | %d | %d / %d | %v / %v | %.2f | %.2f | %.2f |", round, name, m.opsPerSec, m.cpuPerM, 100*m.share,
					lag.down, lag.maxN, lag.p99N, lag.maxT.Round(time.Microsecond), lag.p99T.Round(time.Microsecond), m.strataUs, m.procUs, m.allCPUPerM)
				if name == "split bounded" {
					st := s.hotkeys(t)
					t.Logf("bounded: %s replies, %s refreshes, %s waits, %s combined into another's operation",
						st["bounded_replies"], st["bounded_refreshes"], st["bounded_waits"], st["bounded_combined"])
				}
				s.p.Stop()
				for _, m := range mcs {
					m.Stop()
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
		// On a machine the measurement shares, the rate follows whatever
		// else runs; the CPU every increment costs the machine (strata,
		// the load generator and every memcached) does not.
		machine := func(m measurement) float64 { return m.strataUs + m.procUs + m.allCPUPerM }
		strataCPU := func(m measurement) float64 { return m.strataUs }
		generator := func(m measurement) float64 { return m.procUs }
		for _, name := range []string{"unsplit", "split exact", "split bounded"} {
			t.Logf("median %s: %.0f increments/s, %.2f CPU s per 1M on the busiest memcached, %.2f µs of machine CPU per increment (strata %.2f, load generator %.2f)",
				name, median(name, ops), median(name, cpu), median(name, machine), median(name, strataCPU), median(name, generator))
		}
		t.Logf("bounded vs unsplit (medians, batch %d): machine CPU per increment %.2f×", batch, median("split bounded", machine)/median("unsplit", machine))
		t.Logf("bounded vs unsplit (medians, batch %d): increments/s %.2f× (goal ≥ 2×), busiest CPU per 1M %.2f× (goal ≤ 0.5×)",
			batch, median("split bounded", ops)/median("unsplit", ops), median("split bounded", cpu)/median("unsplit", cpu))
	}
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
// connections sending rounds of batch pipelined incrs.
func incrLoadReplies(t *testing.T, addr, key string, conns, perConn, batch int) lagStats {
	t.Helper()
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
// one memcached directly, and through a strata process over four L1 and
// one L2 memcached with the key on 8 L1 copies, without and with near =
// 1s. The same driver (getLoad) and connection count serve every
// configuration; the three are measured in interleaved rounds (median of
// three), so that load from elsewhere on the shared machine hits them
// alike, at 3 and at 8 connections, to show whether the driver bounds the
// rates. Beside each rate: the load generator's CPU per get (this test
// process) and the server's (the memcached read directly, or the strata
// process). Runs only with STRATA_MEASURE=1.
func TestMeasureNearCache(t *testing.T) {
	if os.Getenv("STRATA_MEASURE") != "1" {
		t.Skip("set STRATA_MEASURE=1 to run the hot-key measurement")
	}
	const gets = 96_000 // per load; a multiple of the batch times every conns
	bin := testbin.BuildStrata(t)
	t.Log("| value | connections | config | gets/s (median of 3) | × one memcached direct | load generator CPU µs/get | server CPU µs/get |")
	t.Log("|---|---|---|---|---|---|---|")
	for _, size := range []int{100, 10_000} {
		val := strings.Repeat("v", size)
		direct := startMemcached(t, 1)[0]
		if err := client(direct.Addr).Set(&memcache.Item{Key: "celeb:1", Value: []byte(val)}); err != nil {
			t.Fatal(err)
		}
		addrs := []string{direct.Addr}
		serverCPU := []func() float64{func() float64 {
			st := mcStats(t, direct.Addr)
			return statSeconds(st, "rusage_user") + statSeconds(st, "rusage_system")
		}}
		names := []string{"memcached direct", "8 L1 copies", "8 L1 copies, near 1s"}
		var near *strataProc
		for _, nearFor := range []string{"", "near = \"1s\"\n"} {
			l1, l2 := startMemcached(t, 4), startMemcached(t, 1)
			// Every L2 hit is promoted (threshold 1), so the key is on its
			// L1 copies from the first reads on.
			s := startStrataProc(t, bin, l1, l2, "[promotion]\nthreshold = 1\n\n"+
				"[[hotkeys.rule]]\nprefix = \"celeb:\"\nkind = \"read\"\nsplit = 8\n"+nearFor)
			if err := client(s.addr).Set(&memcache.Item{Key: "celeb:1", Value: []byte(val)}); err != nil {
				t.Fatal(err)
			}
			addrs = append(addrs, s.addr)
			serverCPU = append(serverCPU, func() float64 { return s.cpu(t) })
			if nearFor != "" {
				near = s
				// The key is kept near once the detector finds it hot.
				poll.Until(t, 20*time.Second, "the hot key kept near", func() bool {
					getLoad(t, s.addr, "celeb:1", size, 1, 2000)
					return s.hotkeys(t)["near_hits"] != "0"
				})
			}
		}
		for _, conns := range []int{3, 8} {
			rates := make([][]float64, len(addrs))
			cpus := make([][]float64, len(addrs))
			srv := make([][]float64, len(addrs))
			for round := 0; round < 3; round++ {
				for i, addr := range addrs {
					var ru0, ru1 syscall.Rusage
					_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
					s0 := serverCPU[i]()
					r := getLoad(t, addr, "celeb:1", size, conns, gets/conns)
					s1 := serverCPU[i]()
					_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
					rates[i] = append(rates[i], r)
					cpus[i] = append(cpus[i], (rusageSeconds(ru1)-rusageSeconds(ru0))/gets*1e6)
					srv[i] = append(srv[i], (s1-s0)/gets*1e6)
				}
			}
			med := func(v []float64) float64 {
				v = append([]float64(nil), v...)
				sort.Float64s(v)
				return v[len(v)/2]
			}
			base := med(rates[0])
			for i := range addrs {
				t.Logf("| %d B | %d | %s | %.0f | %.2f | %.1f | %.1f |", size, conns, names[i], med(rates[i]), med(rates[i])/base, med(cpus[i]), med(srv[i]))
			}
		}
		st := near.hotkeys(t)
		t.Logf("near: %s hits, %s stores, %s drops", st["near_hits"], st["near_stores"], st["near_drops"])
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
