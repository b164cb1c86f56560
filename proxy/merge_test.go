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

// TestMergePlan: split loops merge after Calm windows in a row under
// Merge, and only then; merged loops split in the first window over Split.
func TestMergePlan(t *testing.T) {
	r := mergeRule{Split: 0.9, Merge: 1.1, Calm: 3}
	for _, tc := range []struct {
		name string
		busy []float64
		want string // per window: '.' no change, 'M' merge, 'S' split
	}{
		{"calm merges on the third window", []float64{1.0, 0.5, 0.2}, "..M"},
		{"a busy window restarts the count", []float64{1.0, 1.0, 1.2, 1.0, 1.0, 1.0}, ".....M"},
		{"at Merge is not under it", []float64{1.1, 1.1, 1.1, 1.1}, "...."},
		{"merged stays up to Split", []float64{0, 0, 0, 0.9, 0.5, 0.89}, "..M..."},
		{"merged splits over Split, then counts afresh", []float64{0, 0, 0, 0.95, 1.0, 1.0, 1.0}, "..MS..M"},
		{"a split host sums over Merge: no flap", []float64{0, 0, 0, 0.95, 1.3, 1.2, 1.4}, "..MS..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p mergePlan
			got := ""
			for _, b := range tc.busy {
				was := p.merged
				switch {
				case !p.next(r, b):
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
	srv.merge.rule = mergeRule{Split: -1, Merge: 1e9, Window: 2e6, Calm: 1}
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
	if st["strata_loop_merges"] == "" || st["strata_loops_merged"] == "" {
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
