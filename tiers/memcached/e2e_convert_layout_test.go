package memcached_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/nutcrackertest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// layoutConfig is a pool on a twemproxy layout with md5 keys over mcs.
func layoutConfig(mcs []*memcachedtest.Server, distribution string) memcached.Config {
	cfg := memcached.Config{Shards: 256, ProbeInterval: 50 * time.Millisecond, RequestTimeout: 2 * time.Second, MoveLeaseTTL: time.Second,
		Compat: "twemproxy", Distribution: distribution, Hash: "md5"}
	for _, m := range mcs {
		cfg.Servers = append(cfg.Servers, memcached.Server{Addr: m.Addr, Weight: 1})
	}
	return cfg
}

// TestConvertLayoutWarm: keys written through twemproxy (nutcracker) in
// a modula layout over three memcached are converted, by the control
// plane over a real etcd, to a layout over four: modula (adding a server
// remaps three keys in four) or, with STRATA_CONVERT_TO=ketama, ketama.
// Two strata serve a read-mostly load on the warm keys and the randomized
// clients of TestMovesRandomized on others throughout; no read may be
// stale, the hit ratio during the conversion must stay within 95 % of
// the one before, and after it every key is where the new layout alone
// puts it, so a strata configured with the new layout only (convert_from
// dropped) reads it. STRATA_CONVERT_KEYS sets the warm keys (default
// 10,000). The handoff window is set as in TestConvertWarm.
func TestConvertLayoutWarm(t *testing.T) {
	const batch, coverage = 128, 8
	keys := envInt("STRATA_CONVERT_KEYS", 10000)
	to := "modula"
	if os.Getenv("STRATA_CONVERT_TO") == "ketama" {
		to = "ketama"
	}
	etcd := etcdtest.Start(t)
	var mcs []*memcachedtest.Server
	var members []shardmap.Server
	for range 4 {
		m := memcachedtest.Start(t)
		mcs = append(mcs, m)
		members = append(members, shardmap.Server{Addr: m.Addr, Weight: 1})
	}
	var yaml strings.Builder
	yaml.WriteString("  hash: md5\n  distribution: modula\n  timeout: 2000\n  servers:\n")
	for _, m := range mcs[:3] {
		fmt.Fprintf(&yaml, "   - %s:1\n", m.Addr)
	}
	incumbent := nutcrackertest.Start(t, yaml.String())

	cfg := layoutConfig(mcs, to)
	old := layoutConfig(mcs[:3], "modula")
	cfg.Managed = true
	cfg.ConvertFrom = &memcached.PriorLayout{Compat: old.Compat, Distribution: old.Distribution, Hash: old.Hash, Servers: old.Servers}
	st := []*moveStrata{serveStrata(t, cfg), serveStrata(t, cfg)}
	// The new layout alone: a switch without conversion, and the file
	// once the conversion is over.
	plain := serveStrata(t, layoutConfig(mcs, to))

	fillWarm(t, incumbent, keys)
	before, switched := warmBaseline(t, st[1].addr, plain.addr, keys)
	t.Logf("%d warm keys written through twemproxy modula over 3: hit ratio %.4f through strata before the conversion, %.4f switching to %s over 4 without conversion",
		keys, before, switched, to)

	wl, rl, grace := startConvertLoad(t, st, keys, coverage)
	defer wl.halt()
	defer rl.halt()

	planes := convertPlanes(t, etcd.Endpoint, st, members, grace, batch, true)
	view := planes[0].View()
	m0, start := rl.mark(), time.Now()
	for _, pl := range planes {
		pl.Start()
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = pl.Stop(ctx)
		}()
	}
	poll.Until(t, 10*time.Minute, "every shard converted", func() bool {
		m, err := view.ShardMap(context.Background(), "l2")
		if err != nil {
			t.Fatal(err)
		}
		return m.Version > 0 && m.OnLayout == 0 && m.Phase == ""
	})
	took := time.Since(start)
	r := finishConversion(t, st, wl, rl, keys, m0)
	during, after, m1, m2 := r.during, r.after, r.m1, r.m2
	fills, lost, leaseMisses := r.fills, r.lost, r.leaseMisses
	newOnly := sampleHits(t, plain.addr, keys, min(keys, 20000))
	t.Logf("conversion of 256 shards from modula over 3 to %s over 4 in batches of %d, grace %v: %v; %d fills, %d lost to a racing write, %d reads met another's lease",
		to, batch, grace, took.Round(time.Millisecond), fills, lost, leaseMisses)
	t.Logf("hit ratio of the read-mostly load: %.4f during (%d reads), %.4f after (%d reads); %.4f before, %.4f switching without conversion; %.4f through the new layout alone after",
		during, m1[0]-m0[0], after, m2[0]-m1[0], before, switched, newOnly)
	hits, acked := wl.check()
	if hits < 100 || acked < 100 {
		t.Errorf("only %d hits and %d acknowledged writes: the checker's clients did little", hits, acked)
	}
	if during < 0.95*before {
		t.Errorf("hit ratio %.4f during the conversion, below 95 %% of %.4f before", during, before)
	}
	if newOnly < after-0.02 {
		t.Errorf("hit ratio %.4f through the new layout alone, %.4f through the converted pools: the keys are not where it puts them", newOnly, after)
	}
	if fills == 0 {
		t.Error("nothing was filled: the conversion was not warm")
	}
}
