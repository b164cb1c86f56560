package conformance

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/auth"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/embedded"
	"github.com/strata-cache/strata/tiers/layered"
)

// startAuthStrata starts strata on the embedded tiers requiring the users
// of the file it writes; it returns the server and the file's path.
func startAuthStrata(t *testing.T, ac auth.Config) (*proxy.Server, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, []byte("alice:secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ac.UsersFile = path
	l2, err := embedded.New(embedded.Config{MaxBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	cfg := proxy.Config{Listen: "127.0.0.1:0", Auth: ac}
	loops := proxytest.Loops(t, cfg)
	tier, err := layered.New(layered.Config{Threshold: 32}, nil, l2, loops)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := proxy.New(cfg, tier, loops)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return srv, path
}

// textSession sends each request and reads the lines its reply has.
type textSession struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func newTextSession(t *testing.T, addr string) *textSession {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return &textSession{t: t, c: c, r: bufio.NewReader(c)}
}

func (s *textSession) do(req string, lines int) string {
	s.t.Helper()
	if _, err := s.c.Write([]byte(req)); err != nil {
		s.t.Fatal(err)
	}
	var b strings.Builder
	for range lines {
		line, err := s.r.ReadString('\n')
		if err != nil {
			s.t.Fatalf("%q: %v after %q", req, err, b.String())
		}
		b.WriteString(line)
	}
	return b.String()
}

func TestAuthText(t *testing.T) {
	srv, path := startAuthStrata(t, auth.Config{})
	s := newTextSession(t, srv.Addr())
	steps := []struct{ req, want string }{
		{"get k\r\n", "CLIENT_ERROR unauthenticated\r\n"},
		{"set k 0 0 1\r\nv\r\n", "CLIENT_ERROR bad authentication token format\r\n"},
		{"set a 0 0 12\r\nalice wrong!\r\n", "CLIENT_ERROR authentication failure\r\n"},
		{"set a 0 0 12\r\nalice secret\r\n", "STORED\r\n"},
		{"set k 0 0 1\r\nv\r\n", "STORED\r\n"},
		{"get k\r\n", "VALUE k 0 1\r\nv\r\nEND\r\n"},
	}
	for _, st := range steps {
		if got := s.do(st.req, strings.Count(st.want, "\n")); got != st.want {
			t.Fatalf("%q: got %q, want %q", st.req, got, st.want)
		}
	}
	s.do("stats\r\n", 0) // its lines are read one at a time below
	var found int
	for {
		line := s.do("", 1)
		if line == "END\r\n" {
			break
		}
		if line == "STAT auth_cmds 2\r\n" || line == "STAT auth_errors 1\r\n" {
			found++
		}
	}
	if found != 2 {
		t.Errorf("stats did not count 2 attempts, 1 failure")
	}
	// A reloaded file takes the old password away from new connections;
	// the authenticated one stays.
	if err := os.WriteFile(path, []byte("alice:changed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.ReloadAuth(); err != nil {
		t.Fatal(err)
	}
	s2 := newTextSession(t, srv.Addr())
	if got := s2.do("set a 0 0 12\r\nalice secret\r\n", 1); got != "CLIENT_ERROR authentication failure\r\n" {
		t.Errorf("old password after reload: %q", got)
	}
	if got := s2.do("set a 0 0 13\r\nalice changed\r\n", 1); got != "STORED\r\n" {
		t.Errorf("new password after reload: %q", got)
	}
	if got := s.do("get k\r\n", 3); got != "VALUE k 0 1\r\nv\r\nEND\r\n" {
		t.Errorf("authenticated connection after reload: %q", got)
	}
}

// A client that keeps failing gets each further answer only after a
// growing delay, and no later request of its overtakes it.
func TestAuthSlowsFailingClient(t *testing.T) {
	srv, _ := startAuthStrata(t, auth.Config{SlowAfter: 1, MaxDelay: 400 * time.Millisecond})
	s := newTextSession(t, srv.Addr())
	bad := "set a 0 0 11\r\nalice wrong\r\n"
	if got := s.do(bad, 1); got != "CLIENT_ERROR authentication failure\r\n" {
		t.Fatalf("first failure: %q", got)
	}
	for i, min := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		start := time.Now()
		got := s.do(bad+"get k\r\n", 2)
		if took := time.Since(start); took < min {
			t.Errorf("failure %d answered after %v, want at least %v", i+2, took, min)
		}
		if got != "CLIENT_ERROR authentication failure\r\nCLIENT_ERROR unauthenticated\r\n" {
			t.Errorf("failure %d: %q", i+2, got)
		}
	}
	if got := s.do("set a 0 0 12\r\nalice secret\r\nget k\r\n", 2); got != "STORED\r\nEND\r\n" {
		t.Errorf("right password after failures: %q", got)
	}
}

func TestAuthBinary(t *testing.T) {
	srv, _ := startAuthStrata(t, auth.Config{})
	// Before authenticating, a binary request gets status 0x20 and the
	// connection closes, as in memcached -S.
	c, err := net.DialTimeout("tcp", srv.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(binFrame(0x00, "k", "", "", 9)); err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(c)
	if len(got) < 24 || got[6] != 0 || got[7] != 0x20 || !bytes.HasSuffix(got, []byte("Auth failure.")) {
		t.Fatalf("unauthenticated binary get: %x", got)
	}
	// pylibmc authenticates with SASL PLAIN; the wrong password fails.
	runPy(t, `
import sys, pylibmc
ok = pylibmc.Client([sys.argv[1]], binary=True, username="alice", password="secret")
ok.set("k", "v")
assert ok.get("k") == "v", ok.get("k")
bad = pylibmc.Client([sys.argv[1]], binary=True, username="alice", password="nope")
try:
    bad.get("k")
    raise SystemExit("the wrong password was let in")
except pylibmc.Error as e:
    print("refused", type(e).__name__)
`, srv.Addr())
}

// runPy runs a python3 script with addr as its argument and fails t if it
// fails.
func runPy(t *testing.T, script, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/usr/bin/python3", "-c", script, addr).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	t.Logf("python3: %s", out)
}
