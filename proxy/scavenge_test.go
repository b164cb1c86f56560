package proxy

import (
	"context"
	"net"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/embedded"
)

const ms = int64(time.Millisecond)

func TestScavengeDecide(t *testing.T) {
	burst := scavengeMinAccepts * acceptGarbage // the garbage of a threshold burst
	for _, c := range []struct {
		name string
		st   scavengeState
		now  int64
		heap uint64
		act  scavengeAction
		wait time.Duration
	}{
		{"accepts still coming", scavengeState{accepts: 2000, last: 1000 * ms}, 1100 * ms, 1 << 20, scavengeWait, 400 * time.Millisecond},
		{"quiet, small heap", scavengeState{accepts: 2000, last: 1000 * ms}, 1500 * ms, 1 << 20, scavengeFree, 0},
		{"quiet, too soon after the last", scavengeState{accepts: 2000, last: 1000 * ms, lastFree: 900 * ms}, 1500 * ms, 1 << 20, scavengeWait, 30*time.Second - 600*time.Millisecond},
		{"quiet, gap passed", scavengeState{accepts: 2000, last: 40000 * ms, lastFree: 900 * ms}, 40500 * ms, 1 << 20, scavengeFree, 0},
		{"heap at the cost bound", scavengeState{accepts: scavengeMinAccepts, last: 0}, 500 * ms, uint64(burst * scavengeMaxCost), scavengeFree, 0},
		{"heap past the cost bound", scavengeState{accepts: scavengeMinAccepts, last: 0}, 500 * ms, uint64(burst*scavengeMaxCost) + 1, scavengeSkip, 0},
		{"large store: skipped", scavengeState{accepts: 10000, last: 0}, 500 * ms, 4 << 30, scavengeSkip, 0},
	} {
		act, wait := scavengeDecide(c.st, c.now, c.heap)
		if act != c.act || wait != c.wait {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, act, wait, c.act, c.wait)
		}
	}
}

// fakeTimers records the one-shot timers a scavenger arms.
type fakeTimers struct {
	waits []time.Duration
	f     func()
	live  bool
}

func (ft *fakeTimers) after(d time.Duration, f func()) func() bool {
	ft.waits, ft.f, ft.live = append(ft.waits, d), f, true
	return func() bool { was := ft.live; ft.live = false; return was }
}

// TestScavengerShell: the threshold accept arms one timer, a burst still
// under way re-arms it, the scavenge runs once the burst is over, the next
// waits out the minimum gap, a large heap skips, and a stopped scavenger
// arms nothing.
func TestScavengerShell(t *testing.T) {
	var now int64
	freed := 0
	heap := uint64(1 << 20)
	ft := &fakeTimers{}
	sc := &scavenger{free: func() { freed++ }, heap: func() uint64 { return heap }, now: func() int64 { return now }, after: ft.after}
	fire := func() { ft.live = false; ft.f() }
	accept := func(n int) {
		for range n {
			sc.accepted()
		}
	}
	accept(scavengeMinAccepts - 1)
	if len(ft.waits) != 0 {
		t.Fatalf("armed after %d accepts", scavengeMinAccepts-1)
	}
	accept(5)
	if len(ft.waits) != 1 || ft.waits[0] != scavengeQuiet {
		t.Fatalf("threshold burst armed %v, want one timer of %v", ft.waits, scavengeQuiet)
	}
	now = 200 * ms
	accept(1) // the burst goes on
	now = 500 * ms
	fire()
	if freed != 0 || ft.waits[len(ft.waits)-1] != 200*time.Millisecond {
		t.Fatalf("mid-burst: freed %d, re-armed %v; want 0, 200ms", freed, ft.waits)
	}
	now = 700 * ms
	fire()
	if freed != 1 || sc.runs != 1 {
		t.Fatalf("after the burst: freed %d times, want 1", freed)
	}
	now = 1000 * ms
	accept(scavengeMinAccepts)
	now = 1500 * ms
	fire()
	if want := scavengeMinGap - 800*time.Millisecond; freed != 1 || ft.waits[len(ft.waits)-1] != want {
		t.Fatalf("second burst: freed %d, waits %v; want 1 and a wait of %v", freed, ft.waits, want)
	}
	now = 700*ms + int64(scavengeMinGap)
	fire()
	if freed != 2 {
		t.Fatalf("after the gap: freed %d times, want 2", freed)
	}
	heap = 1 << 34
	now += 60_000 * ms
	accept(scavengeMinAccepts)
	now += 600 * ms
	fire()
	if freed != 2 || sc.st.accepts != 0 {
		t.Fatalf("over a large heap: freed %d times, %d accepts kept; want 2, 0", freed, sc.st.accepts)
	}
	sc.stop()
	n := len(ft.waits)
	accept(2 * scavengeMinAccepts)
	if len(ft.waits) != n || ft.live {
		t.Fatal("a stopped scavenger armed a timer")
	}
}

// TestScavengeAfterAcceptBurst: a real burst of connections, then quiet,
// makes the server scavenge exactly once; the test logs what it cost.
func TestScavengeAfterAcceptBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("opens over a thousand connections")
	}
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	loops, err := NewLoops(1)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Listen: "127.0.0.1:0", Loops: 1}, store, loops)
	if err != nil {
		t.Fatal(err)
	}
	var cost, wall time.Duration
	var frees atomic.Int32
	done := make(chan struct{})
	srv.scav.free = func() {
		if frees.Add(1) > 1 {
			return
		}
		t0, w0 := cpuTime(), time.Now()
		debug.FreeOSMemory()
		cost, wall = cpuTime()-t0, time.Since(w0)
		close(done)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Stop(context.Background()) }()
	const n = scavengeMinAccepts + 100
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	poll.Until(t, 10*time.Second, "a scavenge after the burst", func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	})
	if n := frees.Load(); n != 1 {
		t.Fatalf("%d scavenges after one burst, want 1", n)
	}
	t.Logf("scavenge after %d accepts: %v of CPU (tick-sampled), %v of wall time", n, cost, wall)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
