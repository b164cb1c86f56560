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
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MissingBinaryError names an external program the comparison needs and
// could not find. It is never skipped silently.
type MissingBinaryError struct {
	Name    string // the program, e.g. "nutcracker"
	Package string // where to get it
	Err     error
}

func (e *MissingBinaryError) Error() string {
	return fmt.Sprintf("%s not found (install %s): %v", e.Name, e.Package, e.Err)
}

func (e *MissingBinaryError) Unwrap() error { return e.Err }

// lookBinary finds name on PATH or returns a *MissingBinaryError.
func lookBinary(name, pkg string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", &MissingBinaryError{Name: name, Package: pkg, Err: err}
	}
	return path, nil
}

// process is one child process. Its output is kept (the first and last
// 16 KiB) to explain a failure.
type process struct {
	name   string
	cmd    *exec.Cmd
	output *outputBuffer
	exited chan struct{} // closed when Wait returns
	err    error         // Wait's result; read only after exited is closed
	once   sync.Once
}

// start runs bin with args. The child gets its own process group (a
// terminal's Ctrl-C reaches us, and we stop the children ourselves) and, on
// Linux, is killed by the kernel if this process dies first.
func start(name, bin string, args ...string) (*process, error) {
	p := &process{name: name, output: &outputBuffer{max: 16 << 10}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	p.cmd.SysProcAttr = childAttr()
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM, waits up to two seconds, then SIGKILL. Idempotent.
func (p *process) stop() {
	p.once.Do(func() {
		select {
		case <-p.exited:
			return
		default:
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(2 * time.Second)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// describeExit explains a process that is gone: the panic or fatal error
// line if it printed one, else the first lines it printed.
func (p *process) describeExit() error {
	var lines []string
	for _, l := range strings.Split(p.output.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	for i, l := range lines {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
			lines = lines[i:]
			break
		}
	}
	out := ""
	if len(lines) > 0 {
		out = ": " + strings.Join(lines[:min(len(lines), 2)], " / ")
	}
	return fmt.Errorf("%s exited (%v)%s", p.name, p.err, out)
}

// waitReady polls addr until it answers a get with END, the process exits,
// or the timeout passes. The poll interval is a process start-up wait, not a
// test synchronisation.
func waitReady(ctx context.Context, p *process, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return p.describeExit()
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if last = probe(addr); last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s on %s not ready after %v: %v", p.name, addr, timeout, last)
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

// freePort returns a loopback port that was free a moment ago. A process
// that then fails to bind it is retried on another (see startServer).
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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

// outputBuffer keeps the first head bytes written to it and the last tail
// bytes: a crash prints its panic first and its goroutine dump after.
type outputBuffer struct {
	mu      sync.Mutex // guards the fields below
	head    []byte
	tail    []byte
	dropped bool
	max     int // of head and of tail each
}

func (b *outputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.max - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > b.max {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.max:]...)
		b.dropped = true
	}
	return n, nil
}

func (b *outputBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped {
		return string(b.head) + "\n[...]\n" + string(b.tail)
	}
	return string(b.head) + string(b.tail)
}
