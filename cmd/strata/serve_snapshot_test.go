package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"
	"github.com/strata-cache/strata/internal/testbin"
)

// warmItems is how many items TestWarmRestartKeepsItemsAndCAS writes:
// STRATA_WARM_ITEMS overrides it, e.g. 4300000 fills the default 1 GiB L2
// with 100-byte values to measure a full-size snapshot by hand (every 50th
// key is then checked instead of every key).
func warmItems(t *testing.T) (n, stride int) {
	n, stride = 20_000, 1
	if v := os.Getenv("STRATA_WARM_ITEMS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
		stride = max(1, n/100_000)
	}
	return n, stride
}

func warmKey(i int) string { return fmt.Sprintf("warm:%08d", i) }

func warmValue(key string) string { return key + strings.Repeat("v", 100-len(key)) }

// TestWarmRestartKeepsItemsAndCAS: a strata whose L2 has a snapshot,
// stopped with SIGTERM and started again, serves every key it held with
// the same value, flags and CAS token, and its next write gets a new CAS.
func TestWarmRestartKeepsItemsAndCAS(t *testing.T) {
	bin := testbin.BuildStrata(t)
	n, stride := warmItems(t)
	snap := filepath.Join(t.TempDir(), "l2.snap")
	cfg := writeFile(t, "strata.toml", fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nsnapshot = %q\n", snap))
	p := startProcess(t, bin, cfg)
	fillPipelined(t, p.listen, n)

	before := map[string]*memcache.Item{}
	c := memcache.New(p.listen)
	c.Timeout = 5 * time.Second
	var keys []string
	for i := 0; i < n; i += stride {
		keys = append(keys, warmKey(i))
	}
	var maxCAS uint64
	for chunk := range slices.Chunk(keys, 100) {
		got, err := c.GetMulti(chunk)
		if err != nil {
			t.Fatal(err)
		}
		for k, it := range got {
			before[k] = it
			maxCAS = max(maxCAS, it.CasID)
		}
	}
	if len(before) != len(keys) {
		t.Fatalf("%d of %d keys hit before the restart", len(before), len(keys))
	}

	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("exit status %d\n%s", code, p.stderr.String())
	}
	wrote := regexp.MustCompile(`msg="snapshot written" tier=l2 items=(\d+) bytes=(\d+) took=(\S+)`).FindStringSubmatch(p.stderr.String())
	if wrote == nil || wrote[1] != strconv.Itoa(n) {
		t.Fatalf("no snapshot of %d items written:\n%s", n, p.stderr.String())
	}

	q := startProcess(t, bin, cfg)
	loaded := regexp.MustCompile(`msg="snapshot loaded" tier=l2 items=(\d+) expired=0 skipped=0 bytes=(\d+) took=(\S+)`).FindStringSubmatch(q.stderr.String())
	if loaded == nil || loaded[1] != strconv.Itoa(n) {
		t.Fatalf("no snapshot of %d items loaded:\n%s", n, q.stderr.String())
	}
	t.Logf("%d items, %s bytes: written in %s, loaded in %s", n, wrote[2], wrote[3], loaded[3])
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Fatalf("the snapshot outlived its load: %v", err)
	}
	c = memcache.New(q.listen)
	c.Timeout = 5 * time.Second
	for chunk := range slices.Chunk(keys, 100) {
		got, err := c.GetMulti(chunk)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range chunk {
			a, b := before[k], got[k]
			if b == nil || string(b.Value) != string(a.Value) || b.Flags != a.Flags || b.CasID != a.CasID {
				t.Fatalf("%s after the restart: %+v, before: %+v", k, b, a)
			}
		}
	}
	if err := c.Set(&memcache.Item{Key: "fresh", Value: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if it, err := c.Get("fresh"); err != nil || it.CasID <= maxCAS {
		t.Fatalf("first write after the restart: %+v, %v; want a CAS above %d", it, err, maxCAS)
	}
}

// fillPipelined writes n items with noreply sets, streamed in pieces of
// 10,000 that each end with a meta no-op it waits for, so a large fill
// costs a round trip per piece rather than per item.
func fillPipelined(t *testing.T, addr string, n int) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w, r := bufio.NewWriterSize(conn, 1<<20), bufio.NewReader(conn)
	for i := 0; i < n; {
		for end := min(i+10_000, n); i < end; i++ {
			k := warmKey(i)
			fmt.Fprintf(w, "set %s %d 0 100 noreply\r\n%s\r\n", k, i%7, warmValue(k))
		}
		fmt.Fprintf(w, "mn\r\n")
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if line, err := r.ReadString('\n'); err != nil || line != "MN\r\n" {
			t.Fatalf("after %d items: %q, %v", i, line, err)
		}
	}
}
