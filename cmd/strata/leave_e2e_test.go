package main

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// TestLeavingStrataSaysSoAtOnce: a strata of a managed fleet stopped with
// SIGTERM removes its report row from the store as soon as its drain is
// over (before it exits), so the leader stops waiting for its
// acknowledgements then rather than when its session lease (10s here)
// runs out. Not sooner: during the drain it still routes by the maps it
// acknowledges.
func TestLeavingStrataSaysSoAtOnce(t *testing.T) {
	etcd := etcdtest.Start(t)
	_, addrs := startMemcacheds(t, 4)
	cfg := writeFile(t, "strata.toml", fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nmanaged = true\nshards = 256\nservers = %s\n[control]\netcd = [%q]\nsession_ttl = \"10s\"\nreport_interval = \"500ms\"\n",
		tomlList(addrs), etcd.Endpoint))
	bin := testbin.BuildStrata(t)
	a, b := startProcess(t, bin, cfg), startProcess(t, bin, cfg)
	_ = a
	st, err := etcdstore.New(etcdstore.Config{Endpoints: []string{etcd.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	agents := func() int {
		rows, _, err := st.List(context.Background(), "shards/l2/agents/")
		if err != nil {
			t.Fatal(err)
		}
		return len(rows)
	}
	poll.Until(t, 20*time.Second, "both strata reporting", func() bool { return agents() == 2 })
	sent := time.Now()
	b.signal(t, syscall.SIGTERM)
	if code := b.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit status %d\n%s", code, b.stderr.String())
	}
	// Gone by the time the process has exited: a row left to its lease
	// would stay up to 10s longer.
	if n := agents(); n != 1 {
		t.Fatalf("%d reports once the leaving strata exited, want 1", n)
	}
	t.Logf("report row gone, process exited %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
}

// TestLeavingLocalityRegionSaysSoAtOnce: the same for a locality fleet: a
// region's strata stopped with SIGTERM removes its acknowledgement row
// when its drain is over, before it exits, rather than leaving it to its
// session lease (2s).
func TestLeavingLocalityRegionSaysSoAtOnce(t *testing.T) {
	f := startFleet(t, fleetOptions{})
	st, err := etcdstore.New(etcdstore.Config{Endpoints: []string{f.etcd.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acks := func() int {
		rows, _, err := st.List(context.Background(), "locality/acks/")
		if err != nil {
			t.Fatal(err)
		}
		return len(rows)
	}
	poll.Until(t, 20*time.Second, "every region acknowledging", func() bool { return acks() == len(f.regions) })
	r := f.region("c")
	sent := time.Now()
	r.p.signal(t, syscall.SIGTERM)
	if code := r.p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit status %d\n%s", code, r.p.stderr.String())
	}
	if n := acks(); n != len(f.regions)-1 {
		t.Fatalf("%d acknowledgements once the leaving region exited, want %d", n, len(f.regions)-1)
	}
	t.Logf("ack row gone, process exited %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
}
