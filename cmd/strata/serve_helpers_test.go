package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// testLog collects an app's log lines so tests can assert on them.
type testLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// testApp is a running app built from a configuration file, the way serve
// builds it, on free loopback ports.
type testApp struct {
	*app
	path  string // the configuration file
	flags *serveFlags
	log   *testLog
}

// startApp writes cfg to a file and serves it with --listen and --admin on
// 127.0.0.1:0 (a.proxy.Addr() and a.admin.Addr() say which ports), plus
// extra flags.
func startApp(t *testing.T, cfg string, extra ...string) *testApp {
	t.Helper()
	path := writeFile(t, "strata.toml", cfg)
	args := append([]string{"--config", path, "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"}, extra...)
	f, err := parseServeFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := loadSettings(f.config, f)
	if err != nil {
		t.Fatal(err)
	}
	tl := &testLog{}
	log, level := newLogger(s.LogFormat, slog.LevelDebug, tl)
	a, err := buildServer(s, log, level)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatalf("strata did not start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return &testApp{app: a, path: path, flags: f, log: tl}
}

func (ta *testApp) adminURL(path string) string { return "http://" + ta.admin.Addr() + path }

// httpDo sends one request to the admin server and returns the status and
// body.
func httpDo(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// textConn is one memcached text-protocol connection.
type textConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialText(t *testing.T, addr string) *textConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &textConn{c: c, r: bufio.NewReader(c)}
}

// cmd sends one command line (and data block) and reads the reply up to
// and including the line for which last returns true.
func (tc *textConn) cmd(t *testing.T, req string, last func(string) bool) []string {
	t.Helper()
	_ = tc.c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(tc.c, req); err != nil {
		t.Fatalf("write %q: %v", req, err)
	}
	var lines []string
	for {
		line, err := tc.r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the reply to %q: %v (so far %q)", req, err, lines)
		}
		line = strings.TrimRight(line, "\r\n")
		lines = append(lines, line)
		if last(line) {
			return lines
		}
	}
}

func endsAtEND(l string) bool {
	return l == "END" || strings.HasPrefix(l, "SERVER_ERROR") || l == "ERROR"
}
func oneLine(string) bool { return true }

func (tc *textConn) set(t *testing.T, key, value string) string {
	t.Helper()
	return tc.cmd(t, fmt.Sprintf("set %s 0 0 %d\r\n%s\r\n", key, len(value), value), oneLine)[0]
}

// get returns the value of key, or "" with ok false on a miss.
func (tc *textConn) get(t *testing.T, key string) (string, bool) {
	t.Helper()
	lines := tc.cmd(t, "get "+key+"\r\n", endsAtEND)
	switch {
	case len(lines) == 1 && lines[0] == "END":
		return "", false
	case len(lines) == 3 && strings.HasPrefix(lines[0], "VALUE "):
		return lines[1], true
	}
	t.Fatalf("get %s: %q", key, lines)
	return "", false
}

// stats returns the STAT lines of "stats [args]" as a map.
func (tc *textConn) stats(t *testing.T, args string) map[string]string {
	t.Helper()
	req := "stats\r\n"
	if args != "" {
		req = "stats " + args + "\r\n"
	}
	out := map[string]string{}
	for _, l := range tc.cmd(t, req, endsAtEND) {
		if f := strings.SplitN(l, " ", 3); len(f) == 3 && f[0] == "STAT" {
			out[f[1]] = f[2]
		}
	}
	return out
}

// rawGet reads key directly from a memcached server, bypassing strata.
func rawGet(t *testing.T, addr, key string) (string, bool) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tc := &textConn{c: c, r: bufio.NewReader(c)}
	return tc.get(t, key)
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
