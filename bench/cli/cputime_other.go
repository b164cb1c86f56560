//go:build !unix

package cli

import "time"

// processCPU is unknown here; benchmarks report 0 CPU seconds.
func processCPU() time.Duration { return 0 }
