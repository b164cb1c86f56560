package proxy_test

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/sampler"
	"github.com/strata-cache/strata/sampler/report"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/layered"
)

func TestSamplerSeesEveryAccessOfSampledKeys(t *testing.T) {
	cfg := sampler.DefaultConfig()
	cfg.Rate = 1 // every key
	cfg.Cluster, cfg.Region = "c1", "r1"
	smp, err := sampler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	smp.Start()
	defer smp.Stop(context.Background())

	l1, _ := embedded.New(embedded.Config{})
	l2, _ := embedded.New(embedded.Config{})
	pcfg := proxy.Config{Listen: "127.0.0.1:0"}
	loops := proxytest.Loops(t, pcfg)
	tier, err := layered.New(layered.Config{Threshold: 1}, l1, l2, loops)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := proxy.New(pcfg, tier, loops, proxy.WithSampler(smp))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr() // the port the kernel chose
	defer srv.Stop(context.Background())

	// gomemcache's Get sends gets, which L2 answers alone; plain get is
	// what reaches L1, so this test speaks the protocol itself.
	got, err := memcachedtest.Exchange(addr, []byte("set photos:1 0 0 10\r\n0123456789\r\n"+
		"get photos:1\r\nget photos:1\r\nget photos:1\r\nget photos:2\r\nquit\r\n"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	hit := "VALUE photos:1 0 10\r\n0123456789\r\nEND\r\n"
	if want := "STORED\r\n" + hit + hit + hit + "END\r\n"; string(got) != want {
		t.Fatalf("replies %q, want %q", got, want)
	}
	deadline := time.Now().Add(5 * time.Second)
	for smp.Stats().Drained < 5 && time.Now().Before(deadline) {
		_ = smp.Sync(context.Background())
	}
	if got := smp.Stats().Recorded; got != 5 {
		t.Fatalf("recorded %d accesses, want 5 (1 set, 3 hits, 1 miss)", got)
	}
	rep := smp.Live()
	var fam *report.Family
	for i := range rep.Families {
		if rep.Families[i].Family == "photos:{N}" {
			fam = &rep.Families[i]
		}
	}
	if fam == nil {
		t.Fatalf("no photos:{N} family in %+v", rep.Families)
	}
	if fam.Accesses != 5 || fam.UniqueKeys != 2 {
		t.Errorf("family accesses %v unique %v, want 5 and 2", fam.Accesses, fam.UniqueKeys)
	}
	if fam.HitRatio.L1 < 0.49 || fam.HitRatio.L1 > 0.51 {
		t.Errorf("L1 hit ratio %.2f, want 2 of 4 reads", fam.HitRatio.L1)
	}
}
