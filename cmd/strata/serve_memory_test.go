package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/internal/testbin"
	"github.com/strata-cache/strata/tiers/embedded"
)

func embeddedMax(n int64) embedded.Config { return embedded.Config{MaxBytes: n} }

func TestMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		l1, l2 config.TierSettings
		want   int64
	}{
		// strata's defaults: 64 MiB + 1 GiB embedded.
		{config.TierSettings{Kind: config.KindEmbedded, Embedded: embeddedMax(64 * mib)}, config.TierSettings{Kind: config.KindEmbedded, Embedded: embeddedMax(1024 * mib)},
			1088*mib + 136*mib + 32*mib},
		{config.TierSettings{Kind: config.KindNone}, config.TierSettings{Kind: config.KindEmbedded, Embedded: embeddedMax(64 * mib)}, 64*mib + 8*mib + 32*mib},
		// Only pools: strata holds no items, no limit.
		{config.TierSettings{Kind: config.KindMemcached}, config.TierSettings{Kind: config.KindMemcached}, 0},
	} {
		s := &config.Settings{L1: c.l1, L2: c.l2}
		if got := memoryLimit(s); got != c.want {
			t.Errorf("l1 %s l2 %s: limit %d MiB, want %d MiB", c.l1.Kind, c.l2.Kind, got/mib, c.want/mib)
		}
	}
}

// procStatus reads a field of /proc/<pid>/status, in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the process's memory: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", field, line)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestEmbeddedRSSBound: a strata with 64 MiB of embedded L2, written four
// times that in 100 KB values, peaks at no more than 1.25 x 64 MiB plus a
// 40 MiB baseline: strata's idle RSS is about 14 MiB (binary, runtime), and
// the rest covers its buffers and the collector's working room. Without a
// memory limit it peaks near twice what is live.
func TestEmbeddedRSSBound(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI must run this test where /proc exists: %v", err)
		}
		t.Skip("needs /proc to read a process's RSS")
	}
	const (
		configured = 64 << 20
		baseline   = 40 << 20
		valueSize  = 100_000
		written    = 4 * configured
	)
	t.Setenv("GOMEMLIMIT", "") // the limit under test is strata's own
	cfg := filepath.Join(t.TempDir(), "strata.toml")
	if err := os.WriteFile(cfg, []byte("[l1]\nkind = \"none\"\n[l2]\nkind = \"embedded\"\nmemory = \"64MiB\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, testbin.BuildStrata(t), cfg)
	pid := p.cmd.Process.Pid

	c, err := net.DialTimeout("tcp", p.listen, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Minute))
	r := bufio.NewReader(c)
	value := bytes.Repeat([]byte("v"), valueSize)
	const batch = 16
	var req []byte
	for i := 0; i < written/valueSize; i += batch {
		req = req[:0]
		for j := i; j < i+batch; j++ {
			req = fmt.Appendf(req, "set key:%08d 0 0 %d\r\n", j, valueSize)
			req = append(req, value...)
			req = append(req, "\r\n"...)
		}
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < batch; j++ {
			if line, err := r.ReadString('\n'); err != nil || line != "STORED\r\n" {
				t.Fatalf("set %d: %q %v", i+j, line, err)
			}
		}
	}
	peak := procStatus(t, pid, "VmHWM")
	rss := procStatus(t, pid, "VmRSS")
	bound := int64(configured + configured/4 + baseline)
	t.Logf("configured %d MiB, written %d MiB: RSS %d MiB, peak %d MiB (bound %d MiB)",
		configured>>20, written>>20, rss>>20, peak>>20, bound>>20)
	if peak > bound {
		t.Errorf("peak RSS %d MiB over the bound %d MiB (1.25 x %d MiB + %d MiB)",
			peak>>20, bound>>20, configured>>20, baseline>>20)
	}
	// The store is full, so the bound was tested against a full store.
	_, _ = fmt.Fprintf(c, "stats\r\n")
	var items int
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "END\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(line, "STAT curr_items "); ok {
			items, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if min := configured / (valueSize + 200) * 9 / 10; items < min {
		t.Errorf("%d items held, want at least %d: the store is not full", items, min)
	}
}
