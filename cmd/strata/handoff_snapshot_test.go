package main

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/testbin"
)

// An upgrade of a strata whose embedded L2 has a snapshot carries the
// store over: the old process drains and writes the file, the new one
// loads it before it accepts, and a writer running through the upgrade
// reads back its last acknowledged value (nothing written to the old
// store after the new one loaded it).
func TestUpgradeCarriesTheEmbeddedStore(t *testing.T) {
	bin := testbin.BuildStrata(t)
	dir := t.TempDir()
	listen, admin, sock := freeAddr(t), freeAddr(t), filepath.Join(dir, "handoff.sock")
	cfg := writeFile(t, "strata.toml", fmt.Sprintf(
		"[server]\nlisten = %q\nhandoff_socket = %q\ndrain_timeout = \"10s\"\n[admin]\nlisten = %q\n[l1]\nkind = \"none\"\n[l2]\nsnapshot = %q\n",
		listen, sock, admin, filepath.Join(dir, "l2.snap")))
	old := startServe(t, exec.Command(bin, "serve", "--config", cfg))

	const keys = 500
	tc := mctext.Dial(t, listen)
	for i := range keys {
		if r := tc.Set(fmt.Sprintf("k:%d", i), strconv.Itoa(i), 0); r != "STORED" {
			t.Fatalf("set: %q", r)
		}
	}
	tc.Close()

	// A writer through the upgrade: each value is acknowledged before the
	// next is sent, on a connection redialled when one is closed.
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var c net.Conn
		var r *bufio.Reader
		for n := int64(1); ; {
			select {
			case <-stop:
				return
			default:
			}
			if c == nil {
				var err error
				if c, err = net.DialTimeout("tcp", listen, 30*time.Second); err != nil {
					continue // waiting in the backlog is not refusal; a refusal shows as a miss of w below
				}
				r = bufio.NewReader(c)
			}
			v := strconv.FormatInt(n, 10)
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := fmt.Fprintf(c, "set w 0 0 %d\r\n%s\r\n", len(v), v); err == nil {
				if line, err := r.ReadString('\n'); err == nil && line == "STORED\r\n" {
					acked.Store(n)
					n++
					continue
				}
			}
			_ = c.Close() // closed between requests by a draining process: send again
			c = nil
		}
	}()
	next := startServe(t, exec.Command(bin, "serve", "--config", cfg))
	if code := old.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("old process exit status %d\n%s", code, old.stderr.String())
	}
	close(stop)
	wg.Wait()
	if !strings.Contains(old.stderr.String(), `msg="snapshot written" tier=l2`) {
		t.Fatalf("the old process wrote no snapshot:\n%s", old.stderr.String())
	}
	if !strings.Contains(next.stderr.String(), `msg="snapshot loaded" tier=l2`) {
		t.Fatalf("the new process loaded no snapshot:\n%s", next.stderr.String())
	}
	tc = mctext.Dial(t, listen)
	for i := range keys {
		if v, ok := tc.Get(fmt.Sprintf("k:%d", i)); !ok || v != strconv.Itoa(i) {
			t.Fatalf("k:%d after the upgrade: %q %v", i, v, ok)
		}
	}
	if v, ok := tc.Get("w"); !ok || v != strconv.FormatInt(acked.Load(), 10) {
		t.Fatalf("w after the upgrade: %q %v, want the last acknowledged %d", v, ok, acked.Load())
	}
	next.signal(t, syscall.SIGTERM)
	if code := next.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("new process exit status %d\n%s", code, next.stderr.String())
	}
}
