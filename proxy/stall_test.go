package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/embedded"
)

// The loop is held by a callback that blocks, as a stopped process holds
// every loop; the client's bytes reach the kernel meanwhile; the stall is
// declared; the loop goes on. The write that arrived during the stall is
// refused, the read behind it is served, and a write sent afterwards is
// executed.
func TestAWriteHeldThroughAStallIsRefusedAndReadsGoOn(t *testing.T) {
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv, d, c, r := startStalling(t, store)
	expect := func(want string) {
		t.Helper()
		got := make([]byte, len(want))
		if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
			t.Fatalf("read %q (%v), want %q", got, err, want)
		}
	}
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(c, s); err != nil {
			t.Fatal(err)
		}
	}
	send("set k 0 0 2\r\nv0\r\n")
	expect("STORED\r\n")

	entered, release := make(chan struct{}), make(chan struct{})
	srv.RunOnLoop(0, func() { close(entered); <-release })
	<-entered
	send("set k 0 0 2\r\nv1\r\nget k\r\n")
	// Declared as the heartbeat would on waking: a reading one gap past
	// the threshold after its last.
	d.Beat(stall.Reading{Mono: stall.Now() + 2*int64(stall.Threshold)})
	close(release)

	expect("SERVER_ERROR " + stall.ErrHeld.Error() + "\r\n")
	expect("VALUE k 0 2\r\nv0\r\nEND\r\n")
	send("set k 0 0 2\r\nv3\r\nget k\r\n")
	expect("STORED\r\nVALUE k 0 2\r\nv3\r\nEND\r\n")
	if n := srv.Counters().StallRefused; n != 1 {
		t.Fatalf("StallRefused = %d, want 1", n)
	}
}

// stampTier records the stall stamp of each write it is handed.
type stampTier struct {
	tiers.Tier
	mu     sync.Mutex // guards writes: Do runs on the loop, the test reads
	writes []uint64
}

func (s *stampTier) Do(op *tiers.Op) {
	if op.Req.Kind != tiers.KindGet {
		s.mu.Lock()
		s.writes = append(s.writes, op.Stall)
		s.mu.Unlock()
	}
	s.Tier.Do(op)
}

// Each request handed to the tier is stamped with the stall generation
// its loop had noticed when it was parsed (tiers.Op.Stall), so a tier
// that parks it can tell, when it sends it on, whether a stall came
// between.
func TestRequestsAreStampedWithTheGenerationTheyWereReadUnder(t *testing.T) {
	store, err := embedded.New(embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tier := &stampTier{Tier: store}
	_, d, c, r := startStalling(t, tier)
	exchange := func(req, want string) {
		t.Helper()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		if _, err := io.ReadFull(r, got); err != nil || string(got) != want {
			t.Fatalf("read %q (%v), want %q", got, err, want)
		}
	}
	before := d.Gen(stall.Now())
	exchange("set k 0 0 2\r\nv0\r\n", "STORED\r\n")
	d.Beat(stall.Reading{Mono: stall.Now() + 2*int64(stall.Threshold)})
	after := d.Gen(stall.Now())
	// A read is never refused; once it is answered, the loop has noticed
	// the stall, and what is sent next is read under the new generation.
	exchange("get k\r\n", "VALUE k 0 2\r\nv0\r\nEND\r\n")
	exchange("set k 0 0 2\r\nv1\r\n", "STORED\r\n")
	var first, second tiers.Op
	first.ReadUnder(before)
	second.ReadUnder(after)
	tier.mu.Lock()
	defer tier.mu.Unlock()
	if want := []uint64{first.Stall, second.Stall}; !slices.Equal(tier.writes, want) {
		t.Fatalf("the writes' stamps %v, want %v", tier.writes, want)
	}
}

// startStalling serves tier on one loop with a stall detector the test
// drives, and returns them with a client connection to the server.
func startStalling(t *testing.T, tier tiers.Tier) (*Server, *stall.Detector, net.Conn, *bufio.Reader) {
	t.Helper()
	loops, err := NewLoops(1)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Listen: "127.0.0.1:0", Loops: 1}, tier, loops)
	if err != nil {
		t.Fatal(err)
	}
	d := stall.New(stall.Threshold, stall.Reading{Mono: stall.Now()})
	srv.stall = d
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	return srv, d, c, bufio.NewReader(c)
}
