package main

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// The embedded tiers allocate every item on the Go heap. Left to GOGC
// alone, the runtime lets the heap grow to about twice what is live before
// it collects, and keeps freed pages mapped for a while: 1 GiB + 64 MiB of
// embedded tiers filled with 100 KB values sat at 1.9–2.6 GB of RSS. A
// memory limit derived from the configured sizes makes the collector run
// (and return pages to the OS) as the process nears it instead.

const (
	// memoryBaseline is what strata needs besides the items: the runtime,
	// goroutine stacks, connection and backend buffers, the sampler's
	// rings and the GC's working room. Idle, strata's RSS is about 14 MiB,
	// some of it the binary's text, which the Go limit does not count.
	memoryBaseline = 32 << 20
	// sizeClassSlack is the share of the embedded budget added for the Go
	// allocator's rounding of each item's buffer to its size class (at
	// most 1/8 up to 32 KiB; a large object is rounded to 8 KiB pages,
	// 6.5 % for a 100 KB value). The store charges the bytes asked for,
	// not the bytes allocated.
	sizeClassSlack = 8 // 1/8
)

// memoryLimit is the Go runtime's memory limit for the tiers s configures:
// the embedded budgets, 1/8 on top for size classes, and the baseline. It
// returns 0 when no tier is embedded: then strata holds no items and the
// default (no limit) stands.
func memoryLimit(s *settings) int64 {
	var embedded int64
	for _, ts := range []*tierSettings{&s.L1, &s.L2} {
		if ts.Kind == KindEmbedded {
			embedded += ts.Embedded.MaxBytes
		}
	}
	if embedded == 0 {
		return 0
	}
	return embedded + embedded/sizeClassSlack + memoryBaseline
}

// applyMemoryLimit sets the limit for s unless the operator set
// GOMEMLIMIT, which wins. It is called once, by serve; a reload that
// changes a tier's memory needs a restart anyway.
func applyMemoryLimit(s *settings, log *slog.Logger) {
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
