// Package proxytest starts proxy servers for tests, on the addresses
// their configurations name (loopback, port 0 for one the kernel picks),
// and stops each when its test ends.
package proxytest

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers"
)

// Loops makes the loop handle for a server configured as cfg, to build
// its tiers with; the test fails if cfg.Loops is refused.
func Loops(t testing.TB, cfg proxy.Config) *proxy.Loops {
	t.Helper()
	l, err := proxy.NewLoops(cfg.Loops)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Start builds and starts a server over tier on loops (see Loops); the
// test fails if either step does. The server is stopped (5 s for its
// connections to drain) when the test ends, before cleanups registered
// earlier run.
func Start(t testing.TB, cfg proxy.Config, tier tiers.Tier, loops *proxy.Loops, opts ...proxy.Option) *proxy.Server {
	t.Helper()
	srv, err := proxy.New(cfg, tier, loops, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return srv
}
