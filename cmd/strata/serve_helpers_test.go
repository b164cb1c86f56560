package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/internal/mctext"
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
	flags *config.Flags
	log   *testLog
}

// startApp writes cfg to a file and serves it with --listen and --admin on
// 127.0.0.1:0 (a.proxy.Addr() and a.admin.Addr() say which ports), plus
// extra flags.
func startApp(t *testing.T, cfg string, extra ...string) *testApp {
	t.Helper()
	args := append([]string{"--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"}, extra...)
	path := ""
	if cfg != "" { // a file that sets no key is refused: none means the defaults
		path = writeFile(t, "strata.toml", cfg)
		args = append([]string{"--config", path}, args...)
	}
	f, err := config.ParseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := config.Load(f.Path, f)
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

// rawGet reads key directly from a memcached server, bypassing strata.
func rawGet(t *testing.T, addr, key string) (string, bool) {
	t.Helper()
	c := mctext.Dial(t, addr)
	defer c.Close()
	return c.Get(key)
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
