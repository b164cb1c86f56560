package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/poll"
)

// TestDrainTimeOneOfFour drains one of four memcached of a managed L2
// holding 100,000 keys, with the default shards, grace window and loop
// timings, under a read load: the drain's batches overlap their grace
// windows, so it takes about one grace window plus the settle hold
// (batches that each waited out their window took about 50 s), and the
// hit ratio of a skewed read load holds through it (warm handoff fills
// the keys read during the grace window; a key first read after it
// misses, so a uniform load over all the keys dips more).
func TestDrainTimeOneOfFour(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for about half a minute")
	}
	const keys = 100_000
	etcd := etcdtest.Start(t)
	_, addrs := startMemcacheds(t, 4)
	cfg := writeFile(t, "strata.toml", fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nmanaged = true\nservers = %s\n[control]\netcd = [%q]\n",
		tomlList(addrs), etcd.Endpoint))
	p := startProcess(t, buildStrata(t), cfg)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("strata:\n%s", p.stderr.String())
		}
	})
	ctl := admin.NewClient(p.admin, "", 5*time.Second)
	shardmap := func() admin.ShardMap {
		t.Helper()
		m, err := ctl.ShardMap(context.Background(), "l2")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	poll.Until(t, 20*time.Second, "a first published map", func() bool { return shardmap().Version >= 1 })
	fillPipelined(t, p.listen, keys)

	var reads, hits, errs atomic.Int64
	var firstErr atomic.Value
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := memcache.New(p.listen)
			cl.Timeout = 2 * time.Second
			// Reads are skewed, as a cache's are: Zipf over the keys.
			zipf := rand.NewZipf(rand.New(rand.NewPCG(uint64(w), 1)), 1.01, 1, keys-1)
			for ctx.Err() == nil {
				_, err := cl.Get(warmKey(int(zipf.Uint64())))
				reads.Add(1)
				switch err {
				case nil:
					hits.Add(1)
				case memcache.ErrCacheMiss:
				default:
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
		}()
	}
	defer func() { stop(); wg.Wait() }()
	r0, h0 := reads.Load(), hits.Load()
	poll.Until(t, 20*time.Second, "a baseline of reads", func() bool { return reads.Load() > r0+5000 })
	r1, h1 := reads.Load(), hits.Load()

	drained := addrs[1]
	var out, errOut bytes.Buffer
	start := time.Now()
	if code := run([]string{"ctl", "--admin", p.admin, "drain", "l2", drained}, &out, &errOut); code != 0 {
		t.Fatalf("strata ctl drain: exit %d: %s", code, errOut.String())
	}
	var ownsNothing time.Duration
	poll.Until(t, 90*time.Second, "drained server emptied", func() bool {
		m := shardmap()
		for _, s := range m.Servers {
			if s.Addr == drained {
				if s.Shards == 0 && ownsNothing == 0 {
					ownsNothing = time.Since(start)
				}
				return s.State == "draining" && s.Shards == 0 && m.MovesInFlight == 0
			}
		}
		t.Fatalf("%s not in the map", drained)
		return false
	})
	took := time.Since(start)
	r2, h2 := reads.Load(), hits.Load()
	before, during := float64(h1-h0)/float64(r1-r0), float64(h2-h1)/float64(r2-r1)
	t.Logf("drain of one server of four, %d keys: owns nothing after %v, moves done after %v; hit ratio %.3f before, %.3f during; %d read errors (first: %v)",
		keys, ownsNothing.Round(100*time.Millisecond), took.Round(100*time.Millisecond), before, during, errs.Load(), firstErr.Load())
	// One grace window (10s) and one settle hold (5s), plus the agents'
	// reports between steps; one batch after another took about 50 s.
	if took > 30*time.Second {
		t.Errorf("the drain took %v", took)
	}
	if during < 0.95*before {
		t.Errorf("hit ratio %.3f during the drain, %.3f before: below 95%%", during, before)
	}
}
