package etcdtest

import (
	"github.com/strata-cache/strata/internal/procstop"
	"github.com/strata-cache/strata/internal/testbin"

	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is one running single-member etcd.
type Server struct {
	// Endpoint is the client address, 127.0.0.1:port.
	Endpoint string

	bin     string
	args    []string
	dataDir string
	logPath string

	mu     sync.Mutex // guards cmd and exited
	cmd    *exec.Cmd
	exited chan struct{}
}

// Binary returns the path of the etcd binary or fails t (see the package
// comment for the one case where it skips).
func Binary(t testing.TB) string {
	t.Helper()
	return testbin.Require(t, "etcd-server", "STRATA_SKIP_ETCD", "etcd")
}

// Start runs a fresh etcd and waits until it is healthy. Ports are picked
// free and the start is retried on other ports if one was taken in
// between. The server is killed by t.Cleanup.
//
// Raft timers are shortened (heartbeat 50ms, election 500ms) so that the
// server's minimum lease TTL is one second and lease tests stay short.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		client, peer := testbin.FreePort(t), testbin.FreePort(t)
		dir := filepath.Join(t.TempDir(), "etcd")
		cu := "http://127.0.0.1:" + strconv.Itoa(client)
		pu := "http://127.0.0.1:" + strconv.Itoa(peer)
		s := &Server{
			Endpoint: "127.0.0.1:" + strconv.Itoa(client),
			bin:      bin,
			dataDir:  dir,
			logPath:  dir + ".log",
			args: []string{
				"--name", "strata-test",
				"--data-dir", dir,
				"--listen-client-urls", cu, "--advertise-client-urls", cu,
				"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
				"--initial-cluster", "strata-test=" + pu,
				"--initial-cluster-state", "new",
				"--heartbeat-interval", "50", "--election-timeout", "500",
				"--logger", "zap", "--log-level", "warn",
			},
		}
		if err := s.start(); err != nil {
			lastErr = err
			continue
		}
		t.Cleanup(s.Kill)
		return s
	}
	t.Fatalf("etcd did not start: %v", lastErr)
	return nil
}

func (s *Server) start() error {
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("etcd exited early: %s", s.logTail())
		default:
		}
		if s.healthy() {
			s.mu.Lock()
			s.cmd, s.exited = cmd, exited
			s.mu.Unlock()
			return nil
		}
		time.Sleep(20 * time.Millisecond) // polling a process start, not synchronising a test
	}
	_ = cmd.Process.Kill()
	<-exited
	return fmt.Errorf("etcd on %s not healthy within 15s: %s", s.Endpoint, s.logTail())
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

func (s *Server) healthy() bool {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get("http://" + s.Endpoint + "/health")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"health":"true"`))
}

// Pid is the process id of the running server (0 when it is not running),
// for tests that read its resource use.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Kill sends SIGKILL and waits for the process to exit. Idempotent.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Restart kills the server if it runs and starts it again on the same
// ports and data directory: the data survives, as after a crash.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := s.start()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("restart etcd on %s: %v", s.Endpoint, err)
		}
		time.Sleep(100 * time.Millisecond) // a port may linger briefly after the kill
	}
}

// Freeze stops the process with SIGSTOP: it holds its sockets but answers
// nothing, like a hung server. It returns once every thread has stopped,
// so a request sent after it cannot be answered.
func (s *Server) Freeze(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	if s.cmd == nil {
		s.mu.Unlock()
		t.Fatalf("etcd on %s is not running", s.Endpoint)
	}
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	if err := procstop.Stop(pid, 10*time.Second); err != nil {
		t.Fatalf("etcd on %s: %v", s.Endpoint, err)
	}
}

// Thaw resumes a frozen process with SIGCONT.
func (s *Server) Thaw(t testing.TB) { s.signal(t, syscall.SIGCONT) }

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		t.Fatalf("etcd on %s is not running", s.Endpoint)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal etcd: %v", err)
	}
}
