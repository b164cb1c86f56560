//go:build !unix

package main

import "time"

// processCPU is unknown here; benchmarks report 0 CPU seconds.
func processCPU() time.Duration { return 0 }
