package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// These tests run `strata serve` as its own process, built with go build,
// to see what an operator sees: signals, exit status, and the memcached
// servers behind it.

// syncBuffer is a process's stderr, readable while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// process is a running `strata serve`.
type process struct {
	cmd    *exec.Cmd
	listen string
	admin  string
	stderr *syncBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // Wait's result, set before exited is closed
}

// startProcess runs bin serve --config cfg on ports the kernel picks and
// waits until it answers on both.
func startProcess(t *testing.T, bin, cfg string) *process {
	t.Helper()
	return startServe(t, exec.Command(bin, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"))
}

// servingLine is the log line strata writes once it serves, with the bound
// addresses.
var servingLine = regexp.MustCompile(`msg="strata serving" listen=(\S+) admin=(\S+)`)

// startServe starts cmd, a strata serve, reads the addresses it bound from
// its log, and waits until it answers on both.
func startServe(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-p.exited:
			t.Fatalf("strata exited while starting: %v\n%s", p.err, p.stderr.String())
		default:
		}
		if m := servingLine.FindStringSubmatch(p.stderr.String()); m != nil && p.listen == "" {
			p.listen, p.admin = m[1], m[2]
		}
		if p.listen != "" {
			if resp, err := http.Get("http://" + p.admin + "/healthz"); err == nil {
				resp.Body.Close()
				if c, err := net.DialTimeout("tcp", p.listen, time.Second); err == nil {
					c.Close()
					return p
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("strata did not come up within 10s:\n%s", p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling a process start
	}
}

func (p *process) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// wait returns the exit code, failing t if the process does not exit in
// time.
func (p *process) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		var ee *exec.ExitError
		if errors.As(p.err, &ee) {
			return ee.ExitCode()
		}
		if p.err != nil {
			t.Fatal(p.err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("strata did not exit within %v:\n%s", within, p.stderr.String())
		return -1
	}
}

func TestSIGHUPMovesL2TrafficOnOpenConnection(t *testing.T) {
	bin := testbin.BuildStrata(t)
	m1, m2 := memcachedtest.Start(t), memcachedtest.Start(t)
	cfg := writeFile(t, "strata.toml", fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nservers = [%q]\ntimeout = \"5s\"\n", m1.Addr))
	p := startProcess(t, bin, cfg)
	tc := mctext.Dial(t, p.listen)
	if r := tc.Set("before", "1", 0); r != "STORED" {
		t.Fatalf("set: %q", r)
	}
	if _, ok := rawGet(t, m1.Addr, "before"); !ok {
		t.Fatal("the first server did not get the write")
	}

	rewrite(t, cfg, fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nservers = [%q]\ntimeout = \"5s\"\n", m2.Addr))
	p.signal(t, syscall.SIGHUP)
	// Writes through the same connection move to m2 within a moment; the
	// connection answers every one of them meanwhile.
	i := 0
	poll.Until(t, 5*time.Second, "writes reaching the new server", func() bool {
		i++
		key := "after:" + strconv.Itoa(i)
		if r := tc.Set(key, "2", 0); r != "STORED" {
			t.Fatalf("set %s during the reload: %q", key, r)
		}
		_, ok := rawGet(t, m2.Addr, key)
		return ok
	})
	for j := 0; j < 10; j++ {
		key := "settled:" + strconv.Itoa(j)
		if r := tc.Set(key, "3", 0); r != "STORED" {
			t.Fatalf("set %s: %q", key, r)
		}
		if _, ok := rawGet(t, m2.Addr, key); !ok {
			t.Fatalf("%s not on the new server", key)
		}
		if _, ok := rawGet(t, m1.Addr, key); ok {
			t.Fatalf("%s on the removed server", key)
		}
	}
	if v, ok := tc.Get("settled:3"); !ok || v != "3" {
		t.Fatalf("get through the same connection: %q %v", v, ok)
	}

	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("exit status %d\n%s", code, p.stderr.String())
	}
	if !bytes.Contains([]byte(p.stderr.String()), []byte("setting=l2.servers")) {
		t.Fatalf("the reload was not logged:\n%s", p.stderr.String())
	}
}

func TestSIGTERMUnderLoadLosesNoAcknowledgedWrite(t *testing.T) {
	bin := testbin.BuildStrata(t)
	l2 := memcachedtest.Start(t)
	cfg := writeFile(t, "strata.toml", fmt.Sprintf("[l2]\nservers = [%q]\n[server]\ndrain_timeout = \"10s\"\n", l2.Addr))
	p := startProcess(t, bin, cfg)

	const (
		clients     = 8
		maxPerConn  = 20000
		signalAfter = 2000 // acknowledged writes before SIGTERM
	)
	var (
		acked   [clients][]string // keys whose set was acknowledged, per client
		total   atomic.Int64
		wg      sync.WaitGroup
		started = time.Now()
	)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			mc := memcache.New(p.listen)
			mc.Timeout = 2 * time.Second
			mc.MaxIdleConns = 2
			for i := 0; i < maxPerConn && time.Since(started) < 20*time.Second; i++ {
				key := fmt.Sprintf("c%d:k%d", c, i)
				if err := mc.Set(&memcache.Item{Key: key, Value: []byte(key + ":value")}); err != nil {
					return // refused or cut by the shutdown: not acknowledged
				}
				acked[c] = append(acked[c], key)
				total.Add(1)
			}
		}(c)
	}
	poll.Until(t, 20*time.Second, "load before the signal", func() bool { return total.Load() >= signalAfter })
	p.signal(t, syscall.SIGTERM)
	code := p.wait(t, 20*time.Second)
	wg.Wait()
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, p.stderr.String())
	}
	n := 0
	direct := mctext.Dial(t, l2.Addr)
	for c := range acked {
		for _, key := range acked[c] {
			v, ok := direct.Get(key)
			if !ok || v != key+":value" {
				t.Fatalf("acknowledged write %s lost: %q %v", key, v, ok)
			}
			n++
		}
	}
	if n < signalAfter {
		t.Fatalf("only %d writes were acknowledged", n)
	}
	t.Logf("%d acknowledged writes, all in the L2 memcached", n)
}
