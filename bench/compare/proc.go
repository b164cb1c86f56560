package compare

import (
	"context"
	"time"

	"github.com/strata-cache/strata/bench/proc"
)

// MissingBinaryError names an external program the comparison needs and
// could not find; it is proc's, named here for callers of Run.
type MissingBinaryError = proc.MissingBinaryError

// cpuTime is the process's user+system CPU time (see proc.CPUTime).
func cpuTime(pid int) (time.Duration, error) { return proc.CPUTime(pid) }

// waitReady waits until addr answers a get (see probe).
func waitReady(ctx context.Context, p *proc.Process, addr string, timeout time.Duration) error {
	return proc.WaitReady(ctx, p, timeout, func() error { return proc.Probe(addr) })
}
