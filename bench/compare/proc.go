package compare

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strata-cache/strata/bench/proc"
)

// MissingBinaryError names an external program the comparison needs and
// could not find; it is proc's, named here for callers of Run.
type MissingBinaryError = proc.MissingBinaryError

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

// cpuTime reads a process's user+system CPU time from /proc/PID/stat.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
	}
	return parseStatCPU(data, clockTicks())
}

// parseStatCPU extracts utime+stime (fields 14 and 15, in clock ticks) from
// a /proc/PID/stat line. The command name (field 2) is in parentheses and
// may contain spaces, so fields are counted from the last ')'.
func parseStatCPU(stat []byte, ticksPerSecond int64) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state), so utime (14) is f[11] and stime (15) f[12].
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc stat times %q %q", f[11], f[12])
	}
	return time.Duration((ut + st) * int64(time.Second) / ticksPerSecond), nil
}

var (
	ticksOnce sync.Once
	ticks     int64
)

// clockTicks is the kernel's USER_HZ, read from the auxiliary vector
// (AT_CLKTCK) because Go has no sysconf; it is 100 on every common Linux.
func clockTicks() int64 {
	ticksOnce.Do(func() {
		ticks = 100
		data, err := os.ReadFile("/proc/self/auxv")
		if err != nil {
			return
		}
		const atClkTck = 17
		for i := 0; i+16 <= len(data); i += 16 {
			k := binary.NativeEndian.Uint64(data[i:])
			v := binary.NativeEndian.Uint64(data[i+8:])
			if k == atClkTck && v > 0 {
				ticks = int64(v)
				return
			}
		}
	})
	return ticks
}
