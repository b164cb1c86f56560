package memcachedtest

import (
	"crypto/tls"
	"github.com/strata-cache/strata/internal/procstop"
	"github.com/strata-cache/strata/internal/testbin"

	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is one running memcached.
type Server struct {
	Addr string // 127.0.0.1:port
	Port int

	args    []string
	pingTLS *tls.Config // started with -Z: the readiness ping handshakes with it
	mu      sync.Mutex  // guards cmd
	cmd     *exec.Cmd
}

// Binary returns the path of the memcached binary or fails t.
func Binary(t testing.TB) string {
	t.Helper()
	return testbin.Require(t, "memcached", "STRATA_SKIP_MEMCACHED", "memcached")
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	return testbin.FreePort(t)
}

// Start runs memcached with extra arguments (for example "-m", "64",
// "-I", "2m") and waits until it answers. It is stopped by t.Cleanup.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	return start(t, nil, extra)
}

// StartTLS starts memcached serving TLS only (-Z) with the certificate
// chain and key files given, and extra arguments (ssl_ca_cert and
// ssl_verify_mode go in an -o of their own). ping is what the readiness
// check handshakes with (a client certificate when the server requires
// one); nil: no certificate, the server's not verified.
func StartTLS(t testing.TB, ping *tls.Config, cert, key string, extra ...string) *Server {
	t.Helper()
	if ping == nil {
		ping = &tls.Config{InsecureSkipVerify: true}
	}
	return start(t, ping, append([]string{"-Z", "-o", "ssl_chain_cert=" + cert + ",ssl_key=" + key}, extra...))
}

func start(t testing.TB, ping *tls.Config, extra []string) *Server {
	t.Helper()
	bin := Binary(t)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port := FreePort(t)
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Port: port, pingTLS: ping}
		s.args = append([]string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-t", "2"}, extra...)
		if os.Geteuid() == 0 {
			s.args = append(s.args, "-u", "nobody")
		}
		if err := s.start(bin); err != nil {
			lastErr = err
			continue
		}
		t.Cleanup(s.Stop)
		return s
	}
	t.Fatalf("memcached did not start: %v", lastErr)
	return nil
}

func (s *Server) start(bin string) error {
	cmd := exec.Command(bin, s.args...)
	cmd.Stdout, cmd.Stderr = nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("memcached exited early: %v", err)
		default:
		}
		if s.ping() == nil {
			s.mu.Lock()
			s.cmd = cmd
			s.mu.Unlock()
			go func() { <-exited }()
			return nil
		}
		time.Sleep(10 * time.Millisecond) // polling a process start, not synchronising a test
	}
	_ = cmd.Process.Kill()
	return fmt.Errorf("memcached on %s did not answer within 5s", s.Addr)
}

func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	if s.pingTLS != nil {
		c = tls.Client(c, s.pingTLS)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("version\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "VERSION ") {
		return fmt.Errorf("unexpected reply %q", line)
	}
	return nil
}

// Stop kills the process. It is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		s.cmd = nil
	}
}

// Pause stops the process with SIGSTOP, as a hung server: the kernel
// still accepts connections and buffers what they send, and the process
// runs all of it on Resume. Stop works on a paused server.
//
// It returns once every thread of the process has stopped: kill returns
// when the signal is queued, and on a loaded host a worker thread can
// still answer a request sent after that.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	if err := procstop.Stop(pid, 10*time.Second); err != nil {
		t.Fatalf("memcached on %s: %v", s.Addr, err)
	}
}

// Resume continues a paused process with SIGCONT.
func (s *Server) Resume(t testing.TB) { s.signal(t, syscall.SIGCONT) }

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		t.Fatalf("memcached on %s is not running", s.Addr)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to memcached on %s: %v", sig, s.Addr, err)
	}
}

// Restart starts the process again on the same port (after Stop), for
// failure tests.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	bin := Binary(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := s.start(bin)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("restart memcached on %s: %v", s.Addr, err)
		}
		time.Sleep(50 * time.Millisecond) // the port may linger briefly
	}
}

// Exchange writes raw bytes to the server on a fresh connection and reads
// until the reply ends with one of the given terminators or the timeout
// passes. It is for tests that compare raw replies.
func Exchange(addr string, req []byte, timeout time.Duration) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write(req); err != nil {
		return nil, err
	}
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, nil // timeout or close ends the reply
		}
	}
}

// Pid is the process id, for reading its CPU time.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd.Process.Pid
}
