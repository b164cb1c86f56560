package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-cache/strata/config"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/etcdtest"
)

// TestPlanesShareOneEtcdClient: every plane's store is a loan of one etcd
// client (one TCP connection to etcd from this process, however many
// planes opened it), the planes' sessions are one lease kept alive, and the client
// closes with the last loan once the composer released it.
func TestPlanesShareOneEtcdClient(t *testing.T) {
	srv := etcdtest.Start(t)
	c := config.ControlSettings{Enabled: true, Etcd: []string{srv.Endpoint}}
	before := connsTo(t, srv.Endpoint)
	var ss stores
	var loans []store.Store
	for range 3 {
		st, err := ss.open(c)
		if err != nil {
			t.Fatal(err)
		}
		loans = append(loans, st)
	}
	ss.release()
	ctx := context.Background()
	a, err := loans[0].NewSession(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loans[1].NewSession(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if a.Lease() != b.Lease() {
		t.Errorf("two planes' sessions keep leases %x and %x alive, want one", a.Lease(), b.Lease())
	}
	if got := connsTo(t, srv.Endpoint) - before; got != 1 {
		t.Errorf("%d connections to etcd for three planes, want 1", got)
	}
	_ = loans[0].Close()
	_ = loans[1].Close()
	if _, err := store.PutRow(ctx, loans[2], "k", []byte("v")); err != nil {
		t.Fatalf("the last plane's store closed with the others: %v", err)
	}
	_ = loans[2].Close()
	if _, _, err := loans[2].Get(ctx, "k"); !errors.Is(err, store.ErrClosed) {
		t.Errorf("after the last loan closed: %v, want ErrClosed", err)
	}
}

// connsTo counts this process's established TCP connections to endpoint
// (127.0.0.1:port), from /proc/net/tcp and this process's descriptors.
func connsTo(t *testing.T, endpoint string) int {
	t.Helper()
	_, port, _ := strings.Cut(endpoint, ":")
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	remote := fmt.Sprintf("0100007F:%04X", p)
	inodes := map[string]bool{}
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && f[2] == remote && f[3] == "01" { // 01: established
			inodes["socket:["+f[9]+"]"] = true
		}
	}
	fds, err := filepath.Glob("/proc/self/fd/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && inodes[l] {
			n++
		}
	}
	return n
}
