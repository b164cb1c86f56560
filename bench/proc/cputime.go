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

// CPUTimeFine is the process's CPU time at nanosecond resolution: the
// on-CPU time of each of its threads from /proc/PID/task/*/schedstat,
// summed. Threads that have exited are not counted, so it is for
// comparing two moments of a long-running server (whose threads live as
// long as it does), where the clock ticks of CPUTime are too coarse.
func CPUTimeFine(pid int) (time.Duration, error) {
	s, err := Sched(pid)
	return s.CPU, err
}

// SchedSample is what the scheduler counted for a process's live threads.
type SchedSample struct {
	CPU time.Duration // on-CPU time
	// Slices is the number of times a thread was put on a CPU: for an idle
	// process, about the number of wakeups of its threads.
	Slices int64
}

// Sched sums /proc/PID/task/*/schedstat over the process's live threads,
// with the same caveat as CPUTimeFine.
func Sched(pid int) (SchedSample, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return SchedSample{}, fmt.Errorf("cpu time of %d: %w", pid, err)
	}
	var total SchedSample
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		ns, err := ParseSchedstat(data)
		if err != nil {
			return SchedSample{}, fmt.Errorf("cpu time of %d: %w", pid, err)
		}
		total.CPU += ns
		if f := strings.Fields(string(data)); len(f) >= 3 {
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil || n < 0 {
				return SchedSample{}, fmt.Errorf("cpu time of %d: malformed schedstat %q", pid, f[2])
			}
			total.Slices += n
		}
	}
	return total, nil
}

// ParseSchedstat reads the first field of a schedstat line: nanoseconds
// spent on a CPU.
func ParseSchedstat(data []byte) (time.Duration, error) {
	f := strings.Fields(string(data))
	if len(f) < 1 {
		return 0, errors.New("empty schedstat")
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || ns < 0 {
		return 0, fmt.Errorf("malformed schedstat %q", f[0])
	}
	return time.Duration(ns), nil
}
