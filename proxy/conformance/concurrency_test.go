package conformance

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/stall"
)

const (
	hammerConns   = 64  // connections, spread by the server over its event loops
	hammerOps     = 300 // requests per connection
	hammerKeys    = 16  // keys written with set/ms and removed with delete
	hammerCounter = 4   // keys only ever incremented
)

// ledger remembers every value ever written to each key. A value is entered
// before the request that writes it is sent, so any value a reader can see
// is already in the ledger.
type ledger struct {
	mu      sync.Mutex // guards written
	written map[string]map[string]bool
}

func (l *ledger) add(key, value string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.written[key] == nil {
		l.written[key] = map[string]bool{}
	}
	l.written[key][value] = true
}

func (l *ledger) has(key, value string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.written[key][value]
}

// heldReply is the answer to a write that strata held through a process
// stall and never ran (DESIGN.md, Stalls). A CI machine can starve the
// process past the stall threshold, so the hammer accepts it for a write;
// the write never ran, which the final count of increments checks.
var heldReply = "SERVER_ERROR " + stall.ErrHeld.Error() + "\r\n"

// flagsOf ties a value to its client flags, so a reply that pairs the value
// of one write with the flags of another is caught.
func flagsOf(value string) uint32 { return crc32.ChecksumIEEE([]byte(value)) }

func TestConcurrency(t *testing.T) { forEachTarget(t, testConcurrency) }

func testConcurrency(t *testing.T, addr string) {
	led := &ledger{written: map[string]map[string]bool{}}
	dataKey := func(i int) string { return fmt.Sprintf("hammer:d%d", i) }
	counterKey := func(i int) string { return fmt.Sprintf("hammer:n%d", i) }

	setup := dial(t, addr)
	for i := 0; i < hammerCounter; i++ {
		if u, err := setup.do("set " + counterKey(i) + " 0 0 1\r\n0\r\n"); err != nil || string(u.line) != "STORED" {
			t.Fatalf("seeding counter: %q, %v", u.raw, err)
		}
	}

	var (
		wg       sync.WaitGroup
		incrMu   sync.Mutex // guards incrs
		incrs    = make([]uint64, hammerCounter)
		failures = make(chan string, hammerConns)
	)
	for w := 0; w < hammerConns; w++ {
		c := dial(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 64))
			seen := make([]uint64, hammerCounter) // last counter value this connection saw
			fail := func(format string, args ...any) {
				failures <- fmt.Sprintf("conn %d: ", w) + fmt.Sprintf(format, args...)
			}
			for op := 0; op < hammerOps; op++ {
				switch r := rng.IntN(100); {
				case r < 25: // set
					k := dataKey(rng.IntN(hammerKeys))
					v := fmt.Sprintf("c%d-%d-%s", w, op, strings.Repeat("p", rng.IntN(200)))
					led.add(k, v)
					u, err := c.do(fmt.Sprintf("set %s %d 0 %d\r\n%s\r\n", k, flagsOf(v), len(v), v))
					if err != nil || (string(u.raw) != "STORED\r\n" && string(u.raw) != heldReply) {
						fail("set %s: %q, %v", k, u.raw, err)
						return
					}
				case r < 35: // ms
					k := dataKey(rng.IntN(hammerKeys))
					v := fmt.Sprintf("m%d-%d", w, op)
					led.add(k, v)
					u, err := c.do(fmt.Sprintf("ms %s %d F%d\r\n%s\r\n", k, len(v), flagsOf(v), v))
					if err != nil || (string(u.raw) != "HD\r\n" && string(u.raw) != heldReply) {
						fail("ms %s: %q, %v", k, u.raw, err)
						return
					}
				case r < 60: // get of one or two data keys
					k1, k2 := dataKey(rng.IntN(hammerKeys)), dataKey(rng.IntN(hammerKeys))
					units, err := c.get(k1 + " " + k2)
					if err != nil {
						fail("get: %v", err)
						return
					}
					if msg := checkRetrieval(units, []string{k1, k2}, led); msg != "" {
						fail("get %s %s: %s", k1, k2, msg)
						return
					}
				case r < 70: // mg
					k := dataKey(rng.IntN(hammerKeys))
					u, err := c.do("mg " + k + " f v\r\n")
					if err != nil {
						fail("mg %s: %v", k, err)
						return
					}
					if msg := checkMetaGet(u, k, led); msg != "" {
						fail("mg %s: %s", k, msg)
						return
					}
				case r < 80: // delete
					k := dataKey(rng.IntN(hammerKeys))
					u, err := c.do("delete " + k + "\r\n")
					if err != nil || (string(u.raw) != "DELETED\r\n" && string(u.raw) != "NOT_FOUND\r\n" && string(u.raw) != heldReply) {
						fail("delete %s: %q, %v", k, u.raw, err)
						return
					}
				case r < 92: // incr: each reply is larger than any this connection saw before
					i := rng.IntN(hammerCounter)
					u, err := c.do("incr " + counterKey(i) + " 1\r\n")
					if err == nil && string(u.raw) == heldReply {
						continue // never ran: not counted
					}
					n, perr := strconv.ParseUint(string(u.line), 10, 64)
					if err != nil || perr != nil || n <= seen[i] {
						fail("incr %s: %q (last seen %d), %v", counterKey(i), u.raw, seen[i], err)
						return
					}
					seen[i] = n
					incrMu.Lock()
					incrs[i]++
					incrMu.Unlock()
				default: // read a counter, once or twice pipelined: never older than what this connection saw
					i := rng.IntN(hammerCounter)
					times := 1 + rng.IntN(2)
					_ = c.conn.SetDeadline(time.Now().Add(stepTimeout))
					if _, err := io.WriteString(c.conn, strings.Repeat("get "+counterKey(i)+"\r\n", times)); err != nil {
						fail("get %s: %v", counterKey(i), err)
						return
					}
					for range times {
						units, err := c.readRetrieval()
						if err != nil || len(units) != 2 {
							fail("get %s: %q, %v", counterKey(i), units, err)
							return
						}
						n, ok := counterValue(units[0].raw, counterKey(i))
						if !ok || n < seen[i] {
							fail("get %s (%d pipelined): %q (last seen %d)", counterKey(i), times, units[0].raw, seen[i])
							return
						}
						seen[i] = n
					}
				}
			}
		}()
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	if t.Failed() {
		return
	}

	// The server still answers, and every increment is accounted for.
	check := dial(t, addr)
	if u, err := check.do("version\r\n"); err != nil || !bytes.HasPrefix(u.line, []byte("VERSION ")) {
		t.Fatalf("version after the hammering: %q, %v", u.raw, err)
	}
	for i := 0; i < hammerCounter; i++ {
		units, err := check.get(counterKey(i))
		if err != nil || len(units) != 2 {
			t.Fatalf("get %s: %q, %v", counterKey(i), units, err)
		}
		n, ok := counterValue(units[0].raw, counterKey(i))
		if !ok || n != incrs[i] {
			t.Errorf("counter %s = %q, want %d increments", counterKey(i), units[0].raw, incrs[i])
		}
	}
}

// checkRetrieval verifies a get reply: VALUE units for a subset of keys in
// request order, each a value once written there, with that value's flags,
// then END. It returns a description of the first problem, or "".
func checkRetrieval(units []unit, keys []string, led *ledger) string {
	if len(units) == 0 || string(units[len(units)-1].raw) != "END\r\n" {
		return fmt.Sprintf("reply %q does not end with END", units)
	}
	next := 0
	for _, u := range units[:len(units)-1] {
		f := strings.Split(string(u.line), " ")
		if len(f) != 4 || f[0] != "VALUE" {
			return fmt.Sprintf("malformed line %q", u.line)
		}
		for next < len(keys) && keys[next] != f[1] {
			next++
		}
		if next == len(keys) {
			return fmt.Sprintf("key %q not requested, or out of order", f[1])
		}
		next++
		value := string(u.raw[len(u.line)+2 : len(u.raw)-2])
		if !led.has(f[1], value) {
			return fmt.Sprintf("%s has value %q, never written there", f[1], value)
		}
		if f[2] != strconv.FormatUint(uint64(flagsOf(value)), 10) || f[3] != strconv.Itoa(len(value)) {
			return fmt.Sprintf("line %q does not match its value %q", u.line, value)
		}
	}
	return ""
}

// checkMetaGet verifies an "mg key f v" reply.
func checkMetaGet(u unit, key string, led *ledger) string {
	if string(u.raw) == "EN\r\n" {
		return ""
	}
	f := strings.Split(string(u.line), " ")
	if len(f) != 3 || f[0] != "VA" {
		return fmt.Sprintf("malformed reply %q", u.raw)
	}
	value := string(u.raw[len(u.line)+2 : len(u.raw)-2])
	if !led.has(key, value) {
		return fmt.Sprintf("value %q never written there", value)
	}
	if f[2] != "f"+strconv.FormatUint(uint64(flagsOf(value)), 10) {
		return fmt.Sprintf("flags %s do not match value %q", f[2], value)
	}
	return ""
}

// counterValue parses "VALUE key 0 n\r\n<digits>\r\n".
func counterValue(raw []byte, key string) (uint64, bool) {
	head, rest, ok := bytes.Cut(raw, []byte("\r\n"))
	if !ok || !bytes.HasPrefix(head, []byte("VALUE "+key+" 0 ")) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(bytes.TrimSuffix(rest, []byte("\r\n"))), 10, 64)
	return n, err == nil
}
