package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
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
	tier, err := layered.New(layered.Config{Threshold: 32}, l1, l2)
	if err != nil {
		t.Fatalf("layered tier: %v", err)
	}
	return startStrataWith(t, tier)
}

// startStrataWith starts strata in this process over tier (for example
// layered memcached pools) and returns its address.
func startStrataWith(t *testing.T, tier *layered.Tier) string {
	t.Helper()
	srv, err := proxy.New(proxy.Config{Listen: "127.0.0.1:0"}, tier)
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	tier.SetExecutor(srv.RunOnLoop)
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
