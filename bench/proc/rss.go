package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// RSS is the process's resident set size, VmRSS of /proc/PID/status, in
// bytes.
func RSS(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("rss of %d: %w", pid, err)
	}
	n, err := ParseStatusRSS(data)
	if err != nil {
		return 0, fmt.Errorf("rss of %d: %w", pid, err)
	}
	return n, nil
}

// ParseStatusRSS reads the VmRSS line of a /proc/PID/status file, which
// the kernel writes in kB ("VmRSS:\t   1234 kB"), and returns bytes.
func ParseStatusRSS(status []byte) (int64, error) {
	for _, line := range bytes.Split(status, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("malformed VmRSS line %q", line)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 || kb > 1<<50 {
			return 0, fmt.Errorf("malformed VmRSS line %q", line)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no VmRSS line (a kernel thread or a zombie)")
}

// LoadAvg is the one-minute load average of /proc/loadavg: how busy the
// machine was around a measurement, which a shared machine makes worth
// recording beside every latency figure.
func LoadAvg() (float64, error) {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(data)
	if len(f) == 0 {
		return 0, fmt.Errorf("empty /proc/loadavg")
	}
	return strconv.ParseFloat(string(f[0]), 64)
}
