//go:build unix

package cli

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used, or
// 0 if the kernel will not say.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
