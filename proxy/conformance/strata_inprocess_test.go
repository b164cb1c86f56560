package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/layered"
)

// inProcess says whether the server under test runs inside the test process,
// which is what makes its heap measurable (TestLongLine).
const inProcess = true

// startStrata starts strata in this process on its default tiers (embedded
// L1 of 64 MiB over an embedded L2 of 1 GiB, promotion 1 in 32) and returns
// its address. It is stopped by t.Cleanup.
func startStrata(t *testing.T) string {
	t.Helper()
	l1, err := embedded.New(embedded.Config{MaxBytes: 64 << 20})
	if err != nil {
		t.Fatalf("embedded L1: %v", err)
	}
	l2, err := embedded.New(embedded.Config{MaxBytes: 1 << 30})
	if err != nil {
		t.Fatalf("embedded L2: %v", err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0"}
	loops := proxytest.Loops(t, cfg)
	tier, err := layered.New(layered.Config{Threshold: 32}, l1, l2, loops)
	if err != nil {
		t.Fatalf("layered tier: %v", err)
	}
	return startStrataWith(t, cfg, tier, loops)
}

// startStrataWith starts strata in this process over tier (for example
// layered memcached pools), built on loops, and returns its address.
func startStrataWith(t *testing.T, cfg proxy.Config, tier *layered.Tier, loops *proxy.Loops) string {
	t.Helper()
	srv, err := proxy.New(cfg, tier, loops)
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("strata did not start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Stop(ctx); err != nil {
			t.Errorf("stopping strata: %v", err)
		}
	})
	return srv.Addr()
}
