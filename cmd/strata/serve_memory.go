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
