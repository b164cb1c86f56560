package hotkeys_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/bench/proc"
	"github.com/strata-cache/strata/internal/memcachedtest"
)

// The rate measurements run strata as a process of its own, built from
// cmd/strata, as it runs where it is deployed. Built into the test
// process, strata's event loops and the load generator's goroutines share
// one Go scheduler and its two processors, and the generator's rate then
// measures that contention: at 100 B and 3 connections the near cache
// read 1.65× memcached in process and 3.47× as a process in the same
// hour.

// strataProc is one strata process over the given memcached.
type strataProc struct {
	addr string
	p    *proc.Process
}

// startStrataProc starts bin serving over l1 (none when empty) and l2,
// with extra appended to its configuration file (the [hotkeys] section),
// and stops it when the test ends.
func startStrataProc(t *testing.T, bin string, l1, l2 []*memcachedtest.Server, extra string) *strataProc {
	t.Helper()
	s := &strataProc{addr: fmt.Sprintf("127.0.0.1:%d", memcachedtest.FreePort(t))}
	var b strings.Builder
	fmt.Fprintf(&b, "[server]\nlisten = %q\ndrain_timeout = \"200ms\"\n\n[admin]\nlisten = \"127.0.0.1:0\"\n\n", s.addr)
	servers := func(section string, mcs []*memcachedtest.Server) {
		if len(mcs) == 0 {
			fmt.Fprintf(&b, "[%s]\nkind = \"none\"\n\n", section)
			return
		}
		addrs := make([]string, len(mcs))
		for i, m := range mcs {
			addrs[i] = fmt.Sprintf("%q", m.Addr)
		}
		fmt.Fprintf(&b, "[%s]\nservers = [%s]\n\n", section, strings.Join(addrs, ", "))
	}
	servers("l1", l1)
	servers("l2", l2)
	b.WriteString(extra)
	file := filepath.Join(t.TempDir(), "strata.toml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := proc.Start("strata", bin, "serve", "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	s.p = p
	t.Cleanup(p.Stop)
	if err := proc.WaitReady(context.Background(), p, 20*time.Second, func() error { return proc.Probe(s.addr) }); err != nil {
		t.Fatalf("strata did not start: %v\n%s", err, p.Output())
	}
	return s
}

// cpu is the process's CPU time so far, in seconds.
func (s *strataProc) cpu(t *testing.T) float64 {
	t.Helper()
	d, err := proc.CPUTime(s.p.Pid())
	if err != nil {
		t.Fatal(err)
	}
	return d.Seconds()
}

// hotkeys reads `stats hotkeys` from the process.
func (s *strataProc) hotkeys(t *testing.T) map[string]string {
	t.Helper()
	return mcStatsArgs(t, s.addr, "hotkeys")
}

// measureProc is measure with the strata process's own CPU per operation
// beside it; procUs is then the load generator's alone.
func measureProc(t *testing.T, s *strataProc, mcs []*memcachedtest.Server, stat string, load func(), ops int) measurement {
	t.Helper()
	c0 := s.cpu(t)
	m := measure(t, mcs, stat, load, ops)
	m.strataUs = (s.cpu(t) - c0) / float64(ops) * 1e6
	return m
}
