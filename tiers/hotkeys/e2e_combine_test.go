package hotkeys_test

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

// TestCombinedIncrsOverMemcached: 6 connections to one strata over four
// memcached each pipeline rounds of 16 incrs of one bounded counter, every
// fourth with noreply. The increments combine: the servers apply fewer
// incrs than the clients sent (the total of the combined ones is exact),
// each connection's replies never go down, none is above the final
// total, and the total is exact.
func TestCombinedIncrsOverMemcached(t *testing.T) {
	mcs := startMemcached(t, 4)
	rule := counterRule
	rule.Reply, rule.Staleness = hotkeys.ReplyBounded, 20*time.Millisecond
	s := startStrata(t, strataOpts{l2: mcs, cfg: hotkeys.Config{Rules: []hotkeys.Rule{rule}}})
	c := mctext.Dial(t, s.addr)
	if l := c.Line("set votes:9 0 0 1\r\n0\r\n"); l != "STORED" {
		t.Fatalf("set: %q", l)
	}
	const conns, rounds, batch = 6, 100, 16
	var sb strings.Builder
	replies := 0
	for i := 0; i < batch; i++ {
		if i%4 == 3 {
			sb.WriteString("incr votes:9 1 noreply\r\n")
			continue
		}
		sb.WriteString("incr votes:9 1\r\n")
		replies++
	}
	round := sb.String()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	highest := make([]uint64, conns)
	for n := 0; n < conns; n++ {
		nc, err := net.DialTimeout("tcp", s.addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = nc.Close() })
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			r := bufio.NewReader(nc)
			var last uint64
			for i := 0; i < rounds; i++ {
				_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := nc.Write([]byte(round)); err != nil {
					errs <- err
					return
				}
				for j := 0; j < replies; j++ {
					l, err := r.ReadString('\n')
					v, perr := strconv.ParseUint(strings.TrimSpace(l), 10, 64)
					if err != nil || perr != nil || v < last {
						errs <- fmt.Errorf("connection %d: %q after %d (%v)", n, l, last, err)
						return
					}
					last = v
				}
			}
			highest[n] = last
		}(n)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := uint64(conns * rounds * batch)
	// The noreply incrs of the last round have no reply to wait for:
	// poll until they landed.
	want := strconv.FormatUint(total, 10)
	poll.Until(t, 10*time.Second, "every increment counted", func() bool { return mustGet(t, s.addr, "votes:9") == want })
	for n, h := range highest {
		if h > total {
			t.Fatalf("connection %d saw %d, above the total %d", n, h, total)
		}
	}
	var applied uint64
	for _, m := range mcs {
		applied += incrs(t, m.Addr)
	}
	st := s.hk.Stats()
	t.Logf("%d increments sent, %d applied by the servers, %d combined", total, applied, st.BoundedCombined)
	if st.BoundedCombined == 0 || applied >= total {
		t.Fatalf("no combining: %d increments applied for %d sent (stats %+v)", applied, total, st)
	}
}
