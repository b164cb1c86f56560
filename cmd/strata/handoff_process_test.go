package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// freeAddr is a loopback address nothing listens on now. An upgrade keeps
// its addresses, so the two processes of a handoff test are configured
// with fixed ports rather than port 0.
func freeAddr(t *testing.T) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(testbin.FreePort(t))
}

// handoffConfig is a strata with an embedded L1 over a memcached L2 (the
// data survives the process), on fixed addresses, with a handoff socket.
func handoffConfig(t *testing.T, l2, listen, admin, sock string) string {
	return writeFile(t, "strata-"+strings.ReplaceAll(admin, ":", "_")+".toml", fmt.Sprintf(
		"[server]\nlisten = %q\nhandoff_socket = %q\ndrain_timeout = \"10s\"\n[admin]\nlisten = %q\n[l2]\nservers = [%q]\ntimeout = \"2s\"\n",
		listen, sock, admin, l2))
}

// loadStats is what the clients of an upgrade saw.
type loadStats struct {
	ok, failed, refused, retried atomic.Int64
	mu                           sync.Mutex
	lat                          []sample // every request's latency
	firstErr                     error
}

type sample struct {
	at  time.Time
	lat time.Duration
}

func (s *loadStats) record(at time.Time, lat time.Duration) {
	s.mu.Lock()
	s.lat = append(s.lat, sample{at, lat})
	s.mu.Unlock()
	s.ok.Add(1)
}

func (s *loadStats) fail(err error) {
	s.failed.Add(1)
	s.mu.Lock()
	if s.firstErr == nil {
		s.firstErr = err
	}
	s.mu.Unlock()
}

// p99 is the 99th percentile latency of the requests sent in [from, to).
func (s *loadStats) p99(from, to time.Time) (time.Duration, int) {
	s.mu.Lock()
	var ls []time.Duration
	for _, x := range s.lat {
		if !x.at.Before(from) && x.at.Before(to) {
			ls = append(ls, x.lat)
		}
	}
	s.mu.Unlock()
	if len(ls) == 0 {
		return 0, 0
	}
	slices.Sort(ls)
	return ls[len(ls)*99/100], len(ls)
}

// errClosedBetween is a connection the server closed before answering
// anything of the request just sent: it closed between requests, and the
// request may be sent again on a new connection.
var errClosedBetween = errors.New("connection closed between requests")

// roundTrip sends a get of key on c and reads its reply.
func roundTrip(c net.Conn, r *bufio.Reader, key string) (hit bool, err error) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "get "+key+"\r\n"); err != nil {
		return false, errClosedBetween
	}
	l, err := r.ReadString('\n')
	if l == "" && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
		return false, errClosedBetween
	}
	if err != nil {
		return false, err
	}
	if strings.HasPrefix(l, "VALUE ") {
		if _, err := r.ReadString('\n'); err != nil {
			return false, err
		}
		l, err = r.ReadString('\n')
		if err != nil {
			return false, err
		}
		hit = true
	}
	if l != "END\r\n" {
		return false, fmt.Errorf("get %s: %q", key, l)
	}
	return hit, nil
}

// dial connects, counting a refused connection.
func (s *loadStats) dial(addr string) (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		s.refused.Add(1)
		return nil, nil, err
	}
	return c, bufio.NewReader(c), nil
}

// persistentClient gets keys on one connection until stop, moving to a new
// connection (and sending the request again, once) when the server closed
// it between requests.
func (s *loadStats) persistentClient(addr string, keys int, seed int, stop <-chan struct{}) {
	c, r, err := s.dial(addr)
	if err != nil {
		s.fail(err)
		return
	}
	defer func() { _ = c.Close() }()
	for i := seed; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("k:%d", i%keys)
		start := time.Now()
		hit, err := roundTrip(c, r, key)
		if errors.Is(err, errClosedBetween) {
			s.retried.Add(1)
			_ = c.Close()
			if c, r, err = s.dial(addr); err != nil {
				s.fail(err)
				return
			}
			hit, err = roundTrip(c, r, key)
		}
		if err == nil && !hit {
			err = fmt.Errorf("%s missed", key)
		}
		if err != nil {
			s.fail(err)
			return
		}
		s.record(start, time.Since(start))
	}
}

// shortClient opens a connection per request.
func (s *loadStats) shortClient(addr string, keys int, seed int, stop <-chan struct{}) {
	for i := seed; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("k:%d", i%keys)
		start := time.Now()
		c, r, err := s.dial(addr)
		if err != nil {
			s.fail(err)
			return
		}
		hit, err := roundTrip(c, r, key)
		_ = c.Close()
		if errors.Is(err, errClosedBetween) {
			// Accepted by the old process as it stopped, closed before
			// the request arrived: sent again on a new connection.
			s.retried.Add(1)
			if c, r, err = s.dial(addr); err != nil {
				s.fail(err)
				return
			}
			hit, err = roundTrip(c, r, key)
			_ = c.Close()
		}
		if err == nil && !hit {
			err = fmt.Errorf("%s missed", key)
		}
		if err != nil {
			s.fail(err)
			return
		}
		s.record(start, time.Since(start))
	}
}

// An upgrade under load: clients on persistent connections and clients
// with a connection per request run through a handoff to a new process.
// None is refused, no request fails (a request whose connection closed
// between requests is sent again once, as clients do), and every key
// still hits afterwards.
func TestUpgradeUnderLoadDropsNothing(t *testing.T) {
	bin := testbin.BuildStrata(t)
	l2 := memcachedtest.Start(t)
	listen, admin, sock := freeAddr(t), freeAddr(t), filepath.Join(t.TempDir(), "handoff.sock")
	cfg := handoffConfig(t, l2.Addr, listen, admin, sock)
	old := startServe(t, exec.Command(bin, "serve", "--config", cfg))

	const keys = 1000
	tc := mctext.Dial(t, listen)
	for i := 0; i < keys; i++ {
		if r := tc.Set(fmt.Sprintf("k:%d", i), "v", 0); r != "STORED" {
			t.Fatalf("set: %q", r)
		}
	}
	tc.Close()

	var st loadStats
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func(i int) { defer wg.Done(); st.persistentClient(listen, keys, i*97, stop) }(i)
		go func(i int) { defer wg.Done(); st.shortClient(listen, keys, i*89, stop) }(i)
	}
	steadyFrom := time.Now()
	poll.Until(t, 20*time.Second, "steady load", func() bool { return st.ok.Load() >= 20000 || st.failed.Load() > 0 })

	handoffFrom := time.Now()
	next := startServe(t, exec.Command(bin, "serve", "--config", cfg))
	if code := old.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("old process exit status %d\n%s", code, old.stderr.String())
	}
	handoffTo := time.Now()
	after := st.ok.Load()
	poll.Until(t, 20*time.Second, "load after the upgrade", func() bool { return st.ok.Load() >= after+20000 || st.failed.Load() > 0 })
	close(stop)
	wg.Wait()

	if n := st.failed.Load(); n > 0 {
		t.Errorf("%d requests failed (first: %v)", n, st.firstErr)
	}
	if n := st.refused.Load(); n > 0 {
		t.Errorf("%d connections refused", n)
	}
	for _, want := range []string{"a successor asks for the listening sockets", "the successor took over; stopping", "stopping: a successor took over"} {
		if !strings.Contains(old.stderr.String(), want) {
			t.Errorf("old process log lacks %q:\n%s", want, old.stderr.String())
		}
	}
	for _, want := range []string{"received listening sockets", "memcached=" + listen, "admin=" + admin, "took over"} {
		if !strings.Contains(next.stderr.String(), want) {
			t.Errorf("new process log lacks %q:\n%s", want, next.stderr.String())
		}
	}
	// Every key still hits, through the new process.
	tc = mctext.Dial(t, listen)
	for i := 0; i < keys; i++ {
		if _, ok := tc.Get(fmt.Sprintf("k:%d", i)); !ok {
			t.Fatalf("k:%d missed after the upgrade", i)
		}
	}
	steady, ns := st.p99(steadyFrom, handoffFrom)
	during, nd := st.p99(handoffFrom, handoffTo)
	afterP, na := st.p99(handoffTo, time.Now())
	t.Logf("requests %d, retried after a close between requests %d, failed %d, refused %d; handoff took %v",
		st.ok.Load(), st.retried.Load(), st.failed.Load(), st.refused.Load(), handoffTo.Sub(handoffFrom).Round(time.Millisecond))
	t.Logf("p99 latency: steady %v (%d requests), during the handoff %v (%d), after %v (%d)", steady, ns, during, nd, afterP, na)

	next.signal(t, syscall.SIGTERM)
	if code := next.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("new process exit status %d\n%s", code, next.stderr.String())
	}
	poll.Until(t, 5*time.Second, "the socket file removed on a clean exit", func() bool { return !fileExists(sock) })
}

// A new process that fails after it received the sockets, before it took
// over, leaves the old one serving as before; a later one takes over.
func TestFailedUpgradeLeavesTheOldServing(t *testing.T) {
	bin := testbin.BuildStrata(t)
	l2 := memcachedtest.Start(t)
	listen, admin, sock := freeAddr(t), freeAddr(t), filepath.Join(t.TempDir(), "handoff.sock")
	old := startServe(t, exec.Command(bin, "serve", "--config", handoffConfig(t, l2.Addr, listen, admin, sock)))

	// The new process's admin address is another, held by someone else:
	// it receives the sockets, then cannot bind its admin listener.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	bad := exec.Command(bin, "serve", "--config", handoffConfig(t, l2.Addr, listen, busy.Addr().String(), sock))
	out, err := bad.CombinedOutput()
	if err == nil {
		t.Fatalf("the new process did not fail:\n%s", out)
	}
	if !strings.Contains(string(out), "received listening sockets") || !strings.Contains(string(out), "address already in use") {
		t.Fatalf("the new process did not fail after receiving the sockets:\n%s", out)
	}
	poll.Until(t, 5*time.Second, "the old process noticing", func() bool {
		return strings.Contains(old.stderr.String(), "the successor did not take over; still serving")
	})
	select {
	case <-old.exited:
		t.Fatalf("the old process exited:\n%s", old.stderr.String())
	default:
	}
	tc := mctext.Dial(t, listen) // a new connection, to the old process
	if r := tc.Set("still", "here", 0); r != "STORED" {
		t.Fatalf("set on the old process: %q", r)
	}
	tc.Close()

	next := startServe(t, exec.Command(bin, "serve", "--config", handoffConfig(t, l2.Addr, listen, admin, sock)))
	if code := old.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("old process exit status %d\n%s", code, old.stderr.String())
	}
	tc = mctext.Dial(t, next.listen)
	if v, ok := tc.Get("still"); !ok || v != "here" {
		t.Fatalf("get through the new process: %q %v", v, ok)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
