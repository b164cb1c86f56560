package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/procstop"
)

// The "stalled strata" fault of the randomized checkers (issue 24): a
// strata is stopped (SIGSTOP) while a client sends it writes of keys the
// checker owns, gives up after giveUp and closes without reading; then
// the strata is resumed (SIGCONT). Those writes were never acknowledged,
// so each carries a value of its own, a ghost, that the checker knows:
// reading a ghost after an acknowledged change of its key issued once
// its client had given up is a stale read (the write ran after a later
// acknowledged one). A ghost read before any such change is allowed: a
// timed-out write may or may not have happened.

// ghostState is what the checker knows of the ghosts. Guarded by
// checker.mu.
type ghostState struct {
	// byKey maps a key to its ghosts' values and the moment their client
	// gave up (zero while it still waits for a reply).
	byKey map[string]map[string]time.Time
	sent  int
}

// addGhost registers a ghost value of key before it is sent, so that no
// read can see it unannounced.
func (c *checker) addGhost(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ghosts.byKey == nil {
		c.ghosts.byKey = map[string]map[string]time.Time{}
	}
	c.ghosts.sent++
	v := "ghost" + strconv.Itoa(c.ghosts.sent)
	if c.ghosts.byKey[key] == nil {
		c.ghosts.byKey[key] = map[string]time.Time{}
	}
	c.ghosts.byKey[key][v] = time.Time{}
	return v
}

// gaveUp records that the client of the ghosts of keys closed at.
func (c *checker) gaveUp(keys []string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		for v := range c.ghosts.byKey[k] {
			c.ghosts.byKey[k][v] = at
		}
	}
}

// ghost reports whether v is a ghost of key, and when its client gave up
// (zero: not yet).
func (c *checker) ghost(key, v string) (gaveUp time.Time, ok bool) {
	if !strings.HasPrefix(v, "ghost") {
		return time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	gaveUp, ok = c.ghosts.byKey[key][v]
	return gaveUp, ok
}

// ghostsSent is how many ghost writes the stall faults sent.
func (c *checker) ghostsSent() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ghosts.sent
}

// stallFault stops the strata pid (serving on listen) for hold, while an
// abandoning client sends it a write of each of keys, half on a
// connection opened before the stop (strata has accepted it) and half on
// one opened during it (the kernel completes the handshake and takes the
// bytes), waits giveUp for a reply that must not come, and closes both.
// The strata is resumed however this ends. It runs on a goroutine of its
// own: it reports by error, never through t.
func (c *checker) stallFault(pid int, listen string, keys []string, hold time.Duration) error {
	early, err := net.DialTimeout("tcp", listen, 5*time.Second)
	if err != nil {
		return err
	}
	defer early.Close()
	// One round trip: the connection is open in strata before the stop.
	_ = early.SetDeadline(time.Now().Add(5 * time.Second))
	var b [256]byte
	if _, err := early.Write([]byte("version\r\n")); err != nil {
		return err
	}
	if n, err := early.Read(b[:]); err != nil || !strings.HasPrefix(string(b[:n]), "VERSION") {
		return fmt.Errorf("version before the stop: %q %v", b[:n], err)
	}

	if err := procstop.Stop(pid, 5*time.Second); err != nil {
		return err
	}
	stoppedAt := time.Now()
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()

	late, err := net.DialTimeout("tcp", listen, 5*time.Second)
	if err != nil {
		return fmt.Errorf("connect while stopped: %w", err)
	}
	defer late.Close()
	conns := []net.Conn{early, late}
	for i, k := range keys {
		v := c.addGhost(k)
		req := fmt.Sprintf("set %s 0 0 %d\r\n%s\r\n", k, len(v), v)
		if _, err := conns[i%2].Write([]byte(req)); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(giveUp)
	for _, nc := range conns {
		_ = nc.SetReadDeadline(deadline)
		if n, err := nc.Read(b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("a stopped strata answered %q (%v)", b[:n], err)
		}
		_ = nc.Close()
	}
	c.gaveUp(keys, time.Now())
	if d := hold - time.Since(stoppedAt); d > 0 {
		time.Sleep(d) // the schedule of the fault: how long the process stays stopped
	}
	return nil
}

// stallRefusedWrites is the count of writes answered SERVER_ERROR after a
// stall by the strata serving on listen: those the proxy refused
// (strata_stall_refused_writes) and those its pools failed, queued but
// unsent at the stall (<prefix>_stall_held). It reports by error, for
// the faults' goroutines.
func stallRefusedWrites(listen string) (int, error) {
	nc, err := net.DialTimeout("tcp", listen, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Write([]byte("stats\r\n")); err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(nc)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 1 && f[0] == "END":
			return n, nil
		case len(f) == 3 && f[0] == "STAT" && (f[1] == "strata_stall_refused_writes" || strings.HasSuffix(f[1], "_stall_held")):
			i, _ := strconv.Atoi(f[2])
			n += i
		}
	}
	return n, fmt.Errorf("stats at %s: %v", listen, sc.Err())
}

// refusedAfterFault polls the count of writes the strata on listen
// answered SERVER_ERROR after a stall, for up to within, until it is at
// least want; it returns the highest count read (an error only if none
// was: the strata may be killed meanwhile by another fault).
func refusedAfterFault(listen string, want int, within time.Duration) (int, error) {
	deadline := time.Now().Add(within)
	best, read := 0, false
	for {
		n, err := stallRefusedWrites(listen)
		if err == nil {
			best, read = max(best, n), true
		}
		switch {
		case read && best >= want:
			return best, nil
		case time.Now().After(deadline) && read:
			return best, nil
		case time.Now().After(deadline):
			return 0, err
		}
		time.Sleep(100 * time.Millisecond) // polling a counter, with a deadline
	}
}

// ghostKeys picks n of the checker's keys for a stall fault: worker w's
// key k, named by keyOf, for random w < workers and k.
func (c *checker) ghostKeys(rng *rand.Rand, workers, n int) []string {
	keyOf := c.keyOf
	if keyOf == nil {
		keyOf = defaultKeyOf
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = keyOf(rng.IntN(workers), rng.IntN(c.keys))
	}
	return keys
}

// stallHold is how long a stall fault keeps its strata stopped: longer
// than its client waits (giveUp) and than the stall threshold.
const stallHold = 1500 * time.Millisecond

// stallReport is what a stall fault saw.
type stallReport struct {
	strata string // the stalled strata ("": no fault ran)
	// refused: the writes its strata answered SERVER_ERROR after the
	// stall, read once it had refused the abandoned ones.
	refused int
}

// stallRegion is the stalled-strata fault of the randomized locality
// checker: at a random point of the first part of a run (seeded by
// seed; before the placement leader's kill, at a third of run or later),
// a random region's strata is stopped for stallHold while a client
// abandons writes of six of ck's keys (its six workers') to it. mu
// guards f.regions[*].p.
func (f *fleet) stallRegion(ctx context.Context, t *testing.T, ck *checker, seed uint64, mu *sync.Mutex, run time.Duration) stallReport {
	rng := rand.New(rand.NewPCG(seed, 3))
	sleepCtx(ctx, run/10+time.Duration(rng.IntN(int(run/6))))
	if ctx.Err() != nil {
		return stallReport{}
	}
	r := f.regions[rng.IntN(len(f.regions))]
	mu.Lock()
	pid := r.p.cmd.Process.Pid
	mu.Unlock()
	return ck.stallStrata(t, "region "+r.name, pid, r.listen, ck.ghostKeys(rng, 6, 6))
}

// stallOneOf is the stalled-strata fault of a pool checker: on a
// goroutine, at a random point within maxWait, one of procs is stopped
// for stallHold while a client abandons writes of six of ck's keys
// (workers workers') to it; seed chooses. The function returned waits
// for the fault to end and returns what it saw.
func (ck *checker) stallOneOf(t *testing.T, procs []*process, seed uint64, maxWait time.Duration, workers int) func() stallReport {
	rng := rand.New(rand.NewPCG(seed, 3))
	wait := time.Duration(rng.Int64N(int64(maxWait)))
	i := rng.IntN(len(procs))
	pid, listen := procs[i].cmd.Process.Pid, procs[i].listen
	keys := ck.ghostKeys(rng, workers, 6)
	var rep stallReport
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(wait) // the schedule of the fault
		rep = ck.stallStrata(t, fmt.Sprintf("strata %d", i), pid, listen, keys)
	}()
	// A test that fails meanwhile ends only once the strata is resumed
	// and the goroutine's logging is over.
	t.Cleanup(func() { <-done })
	return func() stallReport {
		<-done
		return rep
	}
}

// stallStrata runs the stalled-strata fault on the strata pid serving on
// listen, named name in the log, with abandoned writes of keys, and
// reads its count of writes answered SERVER_ERROR once it has refused
// the abandoned ones (or after 5s). It reports through t.Errorf: it may
// run on a goroutine of its own.
func (ck *checker) stallStrata(t *testing.T, name string, pid int, listen string, keys []string) stallReport {
	t.Logf("stall %s (pid %d) for %v at %v, abandoning writes of %v", name, pid, stallHold, time.Now().Format("15:04:05.000"), keys)
	if err := ck.stallFault(pid, listen, keys, stallHold); err != nil {
		t.Errorf("the stalled-strata fault on %s: %v", name, err)
		return stallReport{strata: name}
	}
	n, err := refusedAfterFault(listen, len(keys), 5*time.Second)
	if err != nil {
		t.Errorf("%s after its stall: %v", name, err)
	}
	return stallReport{strata: name, refused: n}
}

// log reports the fault once the run is over: the writes answered
// SERVER_ERROR after a stall, summed over the stratas serving on listens
// (or as read after the fault, if the stalled strata has been restarted
// since).
func (s stallReport) log(t *testing.T, ck *checker, listens ...string) {
	t.Helper()
	total := 0
	for _, l := range listens {
		if n, err := stallRefusedWrites(l); err == nil {
			total += n
		}
	}
	t.Logf("stalled strata: %s, %d abandoned writes sent, %d writes answered SERVER_ERROR after a stall, %d reads of an abandoned write before a later acknowledged change",
		s.strata, ck.ghostsSent(), max(total, s.refused), ck.ghostReads.Load())
}

// The checker judges abandoned writes: reading one is allowed while its
// client may still be waiting for it, and is a stale read once an
// acknowledged change of its key was issued after its client gave up.
// Here the abandoned write "runs late" straight in memcached, over the
// worker's acknowledged writes.
func TestCheckerFlagsAnAbandonedWriteReadAfterALaterOne(t *testing.T) {
	if testing.Short() {
		t.Skip("runs memcached")
	}
	mc := memcachedtest.Start(t)
	for _, gaveUp := range []bool{false, true} {
		ck := &checker{keys: 1, clients: []*memcache.Client{memcache.New(mc.Addr)}}
		key := defaultKeyOf(0, 0)
		ghost := ck.addGhost(key)
		if gaveUp {
			ck.gaveUp([]string{key}, time.Now())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		late := memcache.New(mc.Addr)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_ = late.Set(&memcache.Item{Key: key, Value: []byte(ghost)})
				time.Sleep(time.Millisecond) // the ghost lands now and then between the worker's requests
			}
		}()
		ck.run(ctx, 0)
		cancel()
		wg.Wait()
		stale, allowed := ck.stale.Load(), ck.ghostReads.Load()
		t.Logf("client gave up %v: %d stale reads, %d allowed reads of the abandoned write; %d writes", gaveUp, stale, allowed, ck.writes.Load())
		switch {
		case gaveUp && stale == 0:
			// (Allowed reads are those before the worker's first
			// acknowledged change.)
			t.Errorf("an abandoned write read after later acknowledged ones: no stale read (%d allowed)", allowed)
		case !gaveUp && (stale != 0 || allowed == 0):
			t.Errorf("a write whose client still waits: %d stale (%s), %d allowed; want all allowed", stale, ck.firstStale, allowed)
		}
	}
}
