package hotkeys_test

import (
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/tiers/hotkeys"
)

// TestMeasureDetection: how long an adaptive counter rule takes to split
// a key from the moment it turns hot, at 1 K, 10 K and 100 K increments/s.
// Each run starts a fresh strata over four memcached (so no detector has
// seen the key), sends paced noreply incrs of one key on 4 connections,
// and polls the tier until the key is marked. The threshold is the
// default rate (1,000/s) and, for the 1 K/s load that sits exactly on it,
// also 500/s. Three runs per case, median and range reported. Runs only
// with STRATA_MEASURE=1; the achieved rate is reported, since a shared
// machine may not reach the one asked for.
func TestMeasureDetection(t *testing.T) {
	if os.Getenv("STRATA_MEASURE") != "1" {
		t.Skip("set STRATA_MEASURE=1 to run the hot-key measurement")
	}
	mcs := startMemcached(t, 4)
	t.Log("| load (asked) | threshold | achieved incr/s | time to split, median (min–max) |")
	t.Log("|---|---|---|---|")
	for _, c := range []struct{ load, threshold float64 }{{1000, 1000}, {1000, 500}, {10_000, 1000}, {100_000, 1000}} {
		var times []time.Duration
		var achieved float64
		for run := 0; run < 3; run++ {
			cfg := hotkeys.Config{Rate: c.threshold,
				Rules: []hotkeys.Rule{{Prefix: "votes:", Kind: hotkeys.KindCounter, Split: 8, Adaptive: true}}}
			s := startStrata(t, strataOpts{l2: mcs, cfg: cfg})
			d, rate := timeToSplit(t, s, "votes:d", c.load, 10*time.Second)
			times = append(times, d)
			achieved += rate / 3
		}
		sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
		t.Logf("| %.0f/s | %.0f/s | %.0f | %v (%v–%v) |", c.load, c.threshold, achieved,
			times[1].Round(time.Millisecond), times[0].Round(time.Millisecond), times[2].Round(time.Millisecond))
	}
}

// timeToSplit sends noreply incrs of key through s at load per second
// and returns how long after the first the key was marked hot (limit if
// it never was), and the rate achieved meanwhile.
func timeToSplit(t *testing.T, s *strata, key string, load float64, limit time.Duration) (time.Duration, float64) {
	t.Helper()
	const conns = 4
	var stop atomic.Bool
	var sent atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	line := "incr " + key + " 1 noreply\r\n"
	for c := 0; c < conns; c++ {
		nc, err := net.DialTimeout("tcp", s.addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer nc.Close()
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			var mine int64
			var buf strings.Builder
			for !stop.Load() {
				want := int64(time.Since(start).Seconds() * load / conns)
				if n := want - mine; n > 0 {
					buf.Reset()
					for i := int64(0); i < n; i++ {
						buf.WriteString(line)
					}
					_ = nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
					if _, err := nc.Write([]byte(buf.String())); err != nil {
						t.Error(err)
						return
					}
					mine += n
					sent.Add(n)
				}
				<-tick.C
			}
		}()
	}
	var took time.Duration
	tick := time.NewTicker(time.Millisecond)
	for took = time.Since(start); took < limit && s.hk.Stats().Marked == 0; took = time.Since(start) {
		<-tick.C
	}
	tick.Stop()
	rate := float64(sent.Load()) / time.Since(start).Seconds()
	stop.Store(true)
	wg.Wait()
	return took, rate
}
