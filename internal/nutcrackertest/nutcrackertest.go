package nutcrackertest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// Start runs nutcracker with one pool named "alpha" whose YAML body (the
// lines under the pool name, without listen:) is body, and returns its
// listen address once it accepts connections. It is stopped by t.Cleanup.
func Start(t testing.TB, body string) string {
	t.Helper()
	bin := testbin.Require(t, "nutcracker", "STRATA_SKIP_NUTCRACKER", "nutcracker")
	dir := t.TempDir()
	listen := "127.0.0.1:" + strconv.Itoa(testbin.FreePort(t))
	conf := filepath.Join(dir, "nutcracker.yml")
	yaml := fmt.Sprintf("alpha:\n  listen: %s\n%s", listen, body)
	if err := os.WriteFile(conf, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf, "-o", filepath.Join(dir, "nutcracker.log"),
		"-a", "127.0.0.1", "-s", strconv.Itoa(testbin.FreePort(t)), "-p", filepath.Join(dir, "pid"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("nutcracker: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	poll.Until(t, 5*time.Second, "nutcracker accepts on "+listen, func() bool {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "nutcracker.log"))
			t.Fatalf("nutcracker exited:\n%s\nconfig:\n%s", log, yaml)
		default:
		}
		c, err := net.DialTimeout("tcp", listen, 100*time.Millisecond)
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
	return listen
}
