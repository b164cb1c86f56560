package proc

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// MissingBinaryError names an external program a benchmark needs and could
// not find. It is never skipped silently.
type MissingBinaryError struct {
	Name    string // the program, e.g. "nutcracker"
	Package string // where to get it
	Err     error
}

func (e *MissingBinaryError) Error() string {
	return fmt.Sprintf("%s not found (install %s): %v", e.Name, e.Package, e.Err)
}

func (e *MissingBinaryError) Unwrap() error { return e.Err }

// LookBinary finds name on PATH or returns a *MissingBinaryError naming
// pkg.
func LookBinary(name, pkg string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", &MissingBinaryError{Name: name, Package: pkg, Err: err}
	}
	return path, nil
}

// Process is one running child.
type Process struct {
	Name   string
	cmd    *exec.Cmd
	output *outputBuffer
	exited chan struct{} // closed when Wait returns
	err    error         // Wait's result; read only after exited is closed
	once   sync.Once
}

// Start runs bin with args in its own process group.
func Start(name, bin string, args ...string) (*Process, error) {
	p := &Process{Name: name, output: &outputBuffer{max: 16 << 10}, exited: make(chan struct{})}
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

// Pid is the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the child has exited and been reaped.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Output is what the child printed (head and tail, see the package
// comment).
func (p *Process) Output() string { return p.output.String() }

// Stop sends SIGTERM, waits up to two seconds, then SIGKILL. Idempotent.
func (p *Process) Stop() {
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

// DescribeExit explains a process that is gone: the panic or fatal error
// line if it printed one, else the first lines it printed. Call it only
// after Exited is closed.
func (p *Process) DescribeExit() error {
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
	return fmt.Errorf("%s exited (%v)%s", p.Name, p.err, out)
}

// WaitReady calls ready until it succeeds, the process exits, ctx ends or
// the timeout passes. The poll interval paces a process start-up, not a
// test synchronisation.
func WaitReady(ctx context.Context, p *Process, timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return p.DescribeExit()
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if last = ready(); last == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %v: %v", p.Name, timeout, last)
}

// FreePort returns a loopback port that was free a moment ago. A process
// that then fails to bind it is retried on another by its caller.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// outputBuffer keeps the first max bytes written to it and the last max
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

// Probe sends one get for a key no benchmark uses and expects an answer:
// the readiness check of a memcached, a strata or a twemproxy (which has
// no version command) alike.
func Probe(addr string) error {
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
