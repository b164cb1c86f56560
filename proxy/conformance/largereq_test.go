package conformance

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
)

// Large multi-gets, as clients send them: pymemcache's get_many of 3,000
// keys, 8,000 keys, a 200 KB line, a line past strata's whole-line window,
// and the lines memcached refuses. The same bytes go to a real memcached and
// to strata on each target; the replies must agree (CAS uniques masked).

const (
	largeKeys   = 4000 // keys stored before the gets
	largeSlowOK = 60 * time.Second
)

func largeKey(i int) string { return fmt.Sprintf("big:%d", i) }

// largeSeed stores largeKeys keys with values of 0 to 299 bytes and their
// index as flags.
func largeSeed() []byte {
	var b bytes.Buffer
	for i := 0; i < largeKeys; i++ {
		v := strings.Repeat(string(rune('a'+i%26)), i%300)
		fmt.Fprintf(&b, "set %s %d 0 %d\r\n%s\r\n", largeKey(i), i, len(v), v)
	}
	return b.Bytes()
}

// multiGet is op followed by n keys cycling over `over` indexes (those at
// or above largeKeys miss), then extra, then the newline.
func multiGet(op string, n, over int, extra string) string {
	var b strings.Builder
	b.WriteString(op)
	for i := 0; i < n; i++ {
		b.WriteString(" " + largeKey(i%over))
	}
	b.WriteString(extra)
	b.WriteString("\r\n")
	return b.String()
}

var largeRequests = []struct{ name, req string }{
	{"get 3000 keys", multiGet("get", 3000, 3000, "")},
	{"gets 8000 keys half missing", multiGet("gets", 8000, 2*largeKeys, "")},
	{"get 200KB line", multiGet("get", 200<<10/9, largeKeys, "")},
	{"get 1.1MB line past the window", multiGet("get", (1<<20+100<<10)/9, 3*largeKeys, "")},
	{"get 200KB line with a long key last", multiGet("get", 200<<10/9, largeKeys, " "+strings.Repeat("z", 251))},
	{"get 200KB line with a long key first", multiGet("get "+strings.Repeat("z", 251), 200<<10/9, largeKeys, "")},
	{"gat 1500 keys", multiGet("gat 0", 1500, largeKeys, "")},
	{"get 8000 keys then pipelined gets", multiGet("get", 8000, largeKeys, "") + "get big:1 big:2\r\ngets big:3\r\n"},
	{"get nothing but spaces", "get" + strings.Repeat(" ", 100<<10) + "\r\n"},
}

// exchangeMN writes req then mn on a fresh connection and reads the reply
// up to that MN.
func exchangeMN(t *testing.T, addr string, req []byte) []byte {
	t.Helper()
	c := dial(t, addr)
	deadline := time.Now().Add(largeSlowOK)
	done := writeAsync(c.conn, append(append([]byte(nil), req...), "mn\r\n"...), 0, deadline)
	reply, err := readReply(c.conn, 1, deadline)
	if err != nil {
		t.Fatalf("reading the reply: %v (got %d bytes)", err, len(reply))
	}
	if err := <-done; err != nil {
		t.Fatalf("writing: %v", err)
	}
	return reply
}

// mustSeed stores the keys of largeSeed and checks that every set was.
func mustSeed(t *testing.T, addr string, seed []byte) {
	t.Helper()
	reply := exchangeMN(t, addr, seed)
	if want := strings.Repeat("STORED\r\n", largeKeys) + "MN\r\n"; string(reply) != want {
		t.Fatalf("seeding %d keys: %s", largeKeys, firstDifference(reply, []byte(want)))
	}
}

// firstDifference describes where two replies part, unit by unit.
func firstDifference(got, want []byte) string {
	gu, _ := splitUnits(got)
	wu, _ := splitUnits(want)
	for i := 0; i < min(len(gu), len(wu)); i++ {
		if !sameReply(gu[i].raw, wu[i].raw) {
			return fmt.Sprintf("unit %d of %d: strata %s, memcached %s", i, len(wu), quoteCapped(gu[i].raw), quoteCapped(wu[i].raw))
		}
	}
	return fmt.Sprintf("strata sent %d units, memcached %d", len(gu), len(wu))
}

func TestLargeMultiGet(t *testing.T) {
	ref := memcachedtest.Start(t, "-m", "256").Addr
	seed := largeSeed()
	mustSeed(t, ref, seed)
	want := make([][]byte, len(largeRequests))
	for i, r := range largeRequests {
		want[i] = exchangeMN(t, ref, []byte(r.req))
		if len(want[i]) < 10 {
			t.Fatalf("memcached answered %q to %s", want[i], r.name)
		}
	}
	forEachTarget(t, func(t *testing.T, addr string) {
		mustSeed(t, addr, seed)
		for i, r := range largeRequests {
			got := exchangeMN(t, addr, []byte(r.req))
			if !sameReply(got, want[i]) {
				t.Errorf("%s (%d bytes): %s", r.name, len(r.req), firstDifference(got, want[i]))
			}
		}
	})
}

// TestLargeMultiGetBystander: while one client sends 8,000-key gets, far
// past a pool connection's bound of 4,096 requests, another client's small
// sets and gets on the same strata keep succeeding, with the right values.
func TestLargeMultiGetBystander(t *testing.T) {
	big := []byte(multiGet("get", 8000, largeKeys, ""))
	seed := largeSeed()
	forEachTarget(t, func(t *testing.T, addr string) {
		mustSeed(t, addr, seed)
		stop := make(chan struct{})
		var (
			wg     sync.WaitGroup
			okOps  atomic.Int64
			failed string // written by the bystander, read after wg.Wait
		)
		by := dial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key, val := fmt.Sprintf("by:%d", i%10), fmt.Sprintf("v%d", i)
				u, err := by.do("set " + key + " 0 0 " + fmt.Sprint(len(val)) + "\r\n" + val + "\r\n")
				if err != nil || string(u.raw) != "STORED\r\n" {
					failed = fmt.Sprintf("set %s: %q, %v", key, u.raw, err)
					return
				}
				units, err := by.get(key)
				if err != nil || len(units) != 2 || string(units[0].raw) != fmt.Sprintf("VALUE %s 0 %d\r\n%s\r\n", key, len(val), val) {
					failed = fmt.Sprintf("get %s after setting %q: %q, %v", key, val, units, err)
					return
				}
				okOps.Add(1)
			}
		}()
		// Rounds go on until the bystander was served during them a few
		// times (bounded: a bystander starved throughout fails the test).
		wantHits := 8000 // every key cycles below largeKeys
		before := okOps.Load()
		rounds := 0
		for ; rounds < 40 && (rounds < 2 || okOps.Load()-before < 10); rounds++ {
			round := rounds
			reply := exchangeMN(t, addr, big)
			units, _ := splitUnits(reply)
			if n := len(units) - 2; n != wantHits || string(units[len(units)-2].raw) != "END\r\n" {
				t.Errorf("round %d: %d values then %s; want %d values then END", round, n, quoteCapped(units[len(units)-2].raw), wantHits)
			}
		}
		during := okOps.Load() - before
		close(stop)
		wg.Wait()
		if failed != "" {
			t.Fatalf("bystander: %s", failed)
		}
		if during < 10 {
			t.Fatalf("the bystander completed %d requests during %d 8,000-key gets; want at least 10", during, rounds)
		}
		t.Logf("bystander completed %d set+get pairs during %d 8,000-key gets", during, rounds)
	})
}
