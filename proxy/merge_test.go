package proxy

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/memcached"
)

// TestMergePlan: split loops merge after Calm windows in a row in which
// the process's CPU is under Merge, and only then; a busy merged host
// splits to probe, and the rate over the probe's windows decides whether
// the loops stay split. Each window is {busy, cpu, rate}.
func TestMergePlan(t *testing.T) {
	r := mergeRule{Probe: 0.7, Gain: 1.1, Measure: 2, Hold: 3, Rise: 1.5, Merge: 1.1, Calm: 2, MaxShift: 2}
	calm := [][3]float64{{0.5, 0.5, 5}, {0.5, 0.5, 5}}    // ".M", holding at rate 5: 10 is a heavier load
	probe := [][3]float64{{0.8, 0.8, 10}, {0.8, 0.8, 10}} // ".S", merged at rate 10
	noGain := [][3]float64{{1.0, 1.0, 9}, {1.0, 1.0, 12}} // ".M": 10.5 < 10·Gain
	gain := [][3]float64{{1.0, 1.0, 10}, {1.0, 1.0, 12}}  // "..": 11 = 10·Gain
	busy := func(n int) (w [][3]float64) {                // merged and busy, at the same rate
		for range n {
			w = append(w, [3]float64{0.8, 0.8, 10})
		}
		return w
	}
	cat := func(parts ...[][3]float64) (w [][3]float64) {
		for _, p := range parts {
			w = append(w, p...)
		}
		return w
	}
	for _, tc := range []struct {
		name string
		w    [][3]float64
		want string // per window: '.' no change, 'M' merge, 'S' split
	}{
		{"calm merges on the Calm-th window", [][3]float64{{1.2, 1.2, 0}, {1.0, 1.0, 0}, {0.5, 0.5, 0}}, "..M"},
		{"a window at or over Merge restarts the count", [][3]float64{{1.0, 1.0, 0}, {1.2, 1.2, 0}, {1.0, 1.0, 0}, {1.0, 1.0, 0}}, "...M"},
		{"split loops merge on the CPU used, however busy", [][3]float64{{1.5, 0.5, 0}, {1.5, 0.5, 0}}, ".M"},
		{"not busy, but using a core's worth: no merge", [][3]float64{{0.5, 1.2, 0}, {0.5, 1.2, 0}, {0.5, 1.2, 0}}, "..."},
		{"merged, busy decides the probe, not CPU", cat(calm, [][3]float64{{0.8, 0.2, 10}, {0.8, 0.2, 10}}), ".M.S"},
		{"merged, a core's worth of CPU but not busy: no probe", cat(calm, [][3]float64{{0.5, 1.5, 10}, {0.5, 1.5, 10}, {0.5, 1.5, 10}}), ".M..."},
		{"at Merge is not under it", [][3]float64{{1.1, 1.1, 0}, {1.1, 1.1, 0}, {1.1, 1.1, 0}}, "..."},
		{"merged stays up to Probe", cat(calm, [][3]float64{{0.7, 0.7, 10}, {0.1, 0.1, 10}, {0.7, 0.7, 10}}), ".M..."},
		{"a window at Probe restarts the probe's count", cat(calm, [][3]float64{{0.8, 0.8, 10}, {0.7, 0.7, 10}, {0.8, 0.8, 10}, {0.8, 0.8, 10}}), ".M...S"},
		{"a probe without gain merges back and holds", cat(calm, probe, noGain, busy(5)), ".M.S.M....S"},
		{"a probe with gain stays split; merging then wants twice the calm",
			cat(calm, probe, gain, calm, calm), ".M.S.....M"},
		{"a heavier load probes during the hold", cat(calm, probe, noGain, [][3]float64{{0.8, 0.8, 14.9}, {0.8, 0.8, 15}, {0.8, 0.8, 15}}), ".M.S.M..S"},
		{"the hold doubles while probes find no gain", cat(calm, probe, noGain, busy(5), noGain, busy(8)), ".M.S.M....S.M.......S"},
		{"after a merge, the same load waits Hold windows to probe", cat([][3]float64{{0.5, 0.5, 8}, {0.5, 0.5, 12}}, busy(5)), ".M....S"},
		{"after a merge, a heavier load probes at once", cat([][3]float64{{0.5, 0.5, 8}, {0.5, 0.5, 12}}, [][3]float64{{0.8, 0.8, 14.9}, {0.8, 0.8, 15}, {0.8, 0.8, 15}}), ".M..S"},
		{"a split host over Merge: no flap", cat(calm, probe, gain, [][3]float64{{1.3, 1.3, 11}, {1.2, 1.2, 11}, {1.4, 1.4, 11}}), ".M.S....."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.w) != len(tc.want) {
				t.Fatalf("%d windows, %d expectations", len(tc.w), len(tc.want))
			}
			var p mergePlan
			got := ""
			for _, w := range tc.w {
				was := p.merged
				switch {
				case !p.next(r, mergeWindow{busy: w[0], cpu: w[1], rate: w[2]}):
					got += "."
				case was:
					got += "S"
				default:
					got += "M"
				}
				if p.merged == was && got[len(got)-1] != '.' {
					t.Fatalf("reported a change and kept the state %v", was)
				}
			}
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestLoopsMergeAndSplitUnderTraffic: with a rule that merges and splits
// the loops every couple of milliseconds, clients on both loops of a
// server over a memcached pool read what they wrote, in order, while
// their loops change threads under them; and the server stops.
func TestLoopsMergeAndSplitUnderTraffic(t *testing.T) {
	srv := newPoolServer(t, Config{Listen: "127.0.0.1:0", Loops: 2, MergeLoops: true},
		memcached.Config{RequestTimeout: 5 * time.Second})
	if srv.merge == nil {
		t.Fatal("two loops and MergeLoops, but no merger")
	}
	// Every window is calm enough to merge and busy enough to split.
	srv.merge.rule = mergeRule{Probe: -1, Gain: 1e9, Measure: 1, Merge: 1e9, Calm: 1, Window: 2e6}
	startServer(t, srv)

	// The clients connect first, each answered before the next dials, so
	// that the balancer, counting registered connections, spreads them
	// over both loops.
	const clients = 6
	conns := make([]net.Conn, clients)
	for c := range conns {
		var err error
		if conns[c], err = net.Dial("tcp", srv.Addr()); err != nil {
			t.Fatal(err)
		}
		defer conns[c].Close()
		_ = conns[c].SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conns[c].Write([]byte("version\r\n")); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(conns[c]).ReadString('\n'); err != nil {
			t.Fatalf("version: %q %v", line, err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	errs := make(chan error, clients)
	for c, conn := range conns {
		go func() { errs <- readYourWrites(conn, c, deadline) }()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	srv.mu.Lock()
	n := len(srv.loops)
	srv.mu.Unlock()
	if n != 2 {
		t.Fatalf("clients on %d loops, want both", n)
	}
	if got := srv.merge.merges.Load(); got < 10 {
		t.Fatalf("the loops merged %d times in 2 s of traffic, want them to flap", got)
	}
	// Left merged or split, the server still answers on both loops.
	poll.Until(t, 10*time.Second, "a fresh client answered", func() bool {
		c := mctext.Dial(t, srv.Addr())
		defer c.Close()
		return c.Set("after", "x", 0) == "STORED"
	})
	st := mctext.Dial(t, srv.Addr()).Stats("")
	if st["strata_loop_merges"] == "" || st["strata_loops_merged"] == "" || st["strata_loop_probes"] == "" {
		t.Fatalf("stats without the merge figures: %v", st)
	}
}

// readYourWrites sets and gets keys of client c's own until deadline, and
// reports the first read that did not return the client's last write. It
// speaks the text protocol itself: it runs off the test's goroutine.
func readYourWrites(nc net.Conn, c int, deadline time.Time) error {
	_ = nc.SetDeadline(deadline.Add(10 * time.Second))
	r := bufio.NewReader(nc)
	rng := rand.New(rand.NewSource(int64(c)))
	last := map[string]string{}
	for n := 0; time.Now().Before(deadline); n++ {
		key := fmt.Sprintf("c%d-k%d", c, rng.Intn(20))
		if rng.Intn(3) == 0 {
			v := strconv.Itoa(n)
			if _, err := fmt.Fprintf(nc, "set %s 0 0 %d\r\n%s\r\n", key, len(v), v); err != nil {
				return err
			}
			if l, err := r.ReadString('\n'); err != nil || l != "STORED\r\n" {
				return fmt.Errorf("client %d: set %s: %q %v", c, key, l, err)
			}
			last[key] = v
			continue
		}
		if _, err := fmt.Fprintf(nc, "get %s\r\n", key); err != nil {
			return err
		}
		want, set := last[key]
		expect := "END\r\n"
		if set {
			expect = fmt.Sprintf("VALUE %s 0 %d\r\n%s\r\nEND\r\n", key, len(want), want)
		}
		got := make([]byte, len(expect))
		if _, err := io.ReadFull(r, got); err != nil || string(got) != expect {
			return fmt.Errorf("client %d: get %s = %q %v, want %q (request %d)", c, key, got, err, expect, n)
		}
	}
	return nil
}
