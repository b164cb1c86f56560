package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/testbin"
)

// These tests put a strata process at the limits an operator meets: a
// restart with clients connected, and the descriptor limit.

// ask sends version on c and reports whether a reply came within d.
func ask(c net.Conn, r *bufio.Reader, d time.Duration) bool {
	_ = c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write([]byte("version\r\n")); err != nil {
		return false
	}
	l, err := r.ReadString('\n')
	return err == nil && len(l) > len("VERSION ") && l[:8] == "VERSION "
}

type client struct {
	c net.Conn
	r *bufio.Reader
}

func connect(t *testing.T, addr string) (*client, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close() })
	return &client{c: c, r: bufio.NewReader(c)}, nil
}

// Before, the listener lacked SO_REUSEADDR: the first process closed its
// clients' connections, their server side sat in TIME_WAIT, and the second
// process exited with "address already in use".
func TestRestartWithClientsConnectedBindsAtOnce(t *testing.T) {
	bin := testbin.BuildStrata(t)
	p := startServe(t, exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"))
	for i := 0; i < 8; i++ {
		cl, err := connect(t, p.listen)
		if err != nil {
			t.Fatal(err)
		}
		if !ask(cl.c, cl.r, 10*time.Second) {
			t.Fatal("no reply before the restart")
		}
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, p.stderr.String())
	}
	q := startServe(t, exec.Command(bin, "serve", "--listen", p.listen, "--admin", "127.0.0.1:0"))
	cl, err := connect(t, q.listen)
	if err != nil {
		t.Fatal(err)
	}
	if !ask(cl.c, cl.r, 10*time.Second) {
		t.Fatal("the restarted process does not answer")
	}
}

// Before, at the descriptor limit gnet's acceptor exited: the port stayed
// closed for good (new clients were never answered, even after others
// left) while /readyz said 200.
func TestDescriptorLimitPausesAcceptingAndRecovers(t *testing.T) {
	bin := testbin.BuildStrata(t)
	// The shell sets both the soft and the hard limit, so the Go runtime
	// cannot raise it.
	p := startServe(t, exec.Command("sh", "-c", `ulimit -n 64 && exec "$0" "$@"`,
		bin, "serve", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"))
	// One admin connection opened now and kept alive: at the limit a new
	// one could not be accepted, but this one can still ask.
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 10 * time.Second}
	readyz := func() int {
		resp, err := hc.Get("http://" + p.admin + "/readyz")
		if err != nil {
			t.Fatalf("readyz: %v", err)
		}
		// Read to the end, or the client closes the connection
		// instead of keeping it for the next call.
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := readyz(); code != http.StatusOK {
		t.Fatalf("readyz %d before the limit", code)
	}

	// Open connections until one is not answered: accepting has paused,
	// and /readyz says so. A descriptor the process holds only for a
	// moment can make one connection fail and the next accept succeed,
	// so a 200 after a failed connection is checked again by filling on,
	// a few times: at the limit for good, it must read 503.
	var open []*client
	for round := 1; ; round++ {
		for {
			cl, err := connect(t, p.listen)
			if err != nil {
				t.Fatalf("connect: %v", err) // the kernel's backlog accepts
			}
			if !ask(cl.c, cl.r, 3*time.Second) {
				_ = cl.c.Close()
				break
			}
			open = append(open, cl)
			if len(open) > 64 {
				t.Fatal("more connections answered than the descriptor limit allows")
			}
		}
		code := readyz()
		t.Logf("%d connections served, then one was not; readyz %d", len(open), code)
		if code == http.StatusServiceUnavailable {
			break
		}
		if round == 3 {
			t.Fatalf("readyz %d at the descriptor limit, want 503:\n%s", code, p.stderr.String())
		}
	}
	if len(open) < 10 {
		t.Fatalf("only %d connections before the limit", len(open))
	}
	for i, cl := range open {
		if !ask(cl.c, cl.r, 10*time.Second) {
			t.Fatalf("open connection %d not served at the limit", i)
		}
	}

	// Free some descriptors: new clients are accepted and served again.
	for _, cl := range open[:8] {
		_ = cl.c.Close()
	}
	open = open[8:]
	deadline := time.Now().Add(20 * time.Second)
	for {
		cl, err := connect(t, p.listen)
		if err == nil && ask(cl.c, cl.r, 2*time.Second) {
			break
		}
		if cl != nil {
			_ = cl.c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new connection served within 20s after descriptors freed:\n%s", p.stderr.String())
		}
	}
	for i, cl := range open {
		if !ask(cl.c, cl.r, 10*time.Second) {
			t.Fatalf("open connection %d not served after the limit", i)
		}
	}
	if code := readyz(); code != http.StatusOK {
		t.Errorf("readyz %d once accepting again, want 200", code)
	}
}
