package proc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CPUTime reads a process's user+system CPU time from /proc/PID/stat.
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
	}
	return ParseStatCPU(data, clockTicks())
}

// ParseStatCPU extracts utime+stime (fields 14 and 15, in clock ticks) from
// a /proc/PID/stat line. The command name (field 2) is in parentheses and
// may contain spaces, so fields are counted from the last ')'.
func ParseStatCPU(stat []byte, ticksPerSecond int64) (time.Duration, error) {
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
