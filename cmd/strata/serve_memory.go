package main

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/tiers/embedded"
)

// memoryLimit is the Go runtime's memory limit for the embedded tiers s
// configures (embedded.MemoryLimit of their summed budgets); 0 when none
// is embedded.
func memoryLimit(s *config.Settings) int64 {
	var budget int64
	for _, ts := range []*config.TierSettings{&s.L1, &s.L2} {
		if ts.Kind == config.KindEmbedded {
			budget += ts.Embedded.MaxBytes
		}
	}
	return embedded.MemoryLimit(budget)
}

// applyMemoryLimit sets the limit for s unless the operator set
// GOMEMLIMIT, which wins. It is called once, by serve; a reload that
// changes a tier's memory needs a restart anyway.
func applyMemoryLimit(s *config.Settings, log *slog.Logger) {
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		log.Info("memory limit from GOMEMLIMIT", "limit", v)
		return
	}
	limit := memoryLimit(s)
	if limit == 0 {
		return
	}
	debug.SetMemoryLimit(limit)
	log.Info("memory limit derived from the embedded tiers", "limit_bytes", limit)
}

// liveMemLimit answers cache_memlimit over an embedded L2 (the tier of
// record, whose maxbytes stats shows): the store's bound, then the Go
// memory limit for the embedded tiers' new budgets, unless GOMEMLIMIT
// set it.
type liveMemLimit struct{ a *app }

func (m liveMemLimit) SetMaxBytes(n int64) error {
	if err := m.a.l2.store.SetMaxBytes(n); err != nil {
		return err
	}
	var budget int64
	for _, h := range m.a.tierHandles() {
		if h.store != nil {
			budget += int64(h.store.Stats().LimitMaxBytes)
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(embedded.MemoryLimit(budget))
	}
	m.a.log.Info("cache_memlimit: the L2 store's memory bound changed", "bytes", n)
	return nil
}
