package compare

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
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
	return proc.WaitReady(ctx, p, timeout, func() error { return probe(addr) })
}

// probe sends one get for a key no workload uses. Every target answers it,
// twemproxy included (it does not implement version).
func probe(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("get strata-bench-probe\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "END\r\n" && !strings.HasPrefix(line, "VALUE ") {
		return fmt.Errorf("probe answered %q", line)
	}
	return nil
}
