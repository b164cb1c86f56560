// Package testbin finds the programs strata's tests talk to (memcached,
// memccapable, etcd, chromium) and decides what a missing one means. A
// test that needs a real program must not pass without it: it fails,
// saying which Debian package to install. Outside CI a developer may
// choose to skip instead by setting the program's skip variable to 1;
// under CI=true that variable is ignored, so CI can never stay green on
// tests that did not run.
package testbin

import (
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Require returns the path of the first of names found on PATH. Without
// one it fails t naming the Debian package pkg, or skips t when CI is not
// "true" and the environment variable skipVar is "1".
func Require(t testing.TB, pkg, skipVar string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "true" && os.Getenv(skipVar) == "1" {
		t.Skipf("%s not installed (%s=1)", names[0], skipVar)
		return ""
	}
	t.Fatalf("%s not found: install Debian's %s package (or, outside CI, set %s=1 to skip)", names[0], pkg, skipVar)
	return ""
}

// BuildStrata compiles cmd/strata into a directory of t's and returns the
// binary's path, for tests that run strata as its own process.
func BuildStrata(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "strata")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/strata-cache/strata/cmd/strata").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// FreePort returns a loopback TCP port that was free a moment ago, for a
// program that must be told its port (memcached, etcd, a strata process).
//
// The port is drawn below the kernel's ephemeral range: a port the kernel
// hands out for ":0" or for an outgoing connection can be taken by any
// process on the machine between this check and the program's bind, and a
// test that restarts a process on its old port (kill -9, then start
// again) leaves that window open for seconds. Ports below the range are
// only ever taken by an explicit bind, so the draw is random to keep
// parallel test binaries apart. Where the range leaves no room below it,
// the kernel's choice is used.
func FreePort(t testing.TB) int {
	t.Helper()
	lo := ephemeralLow()
	const floor = 10000
	for i := 0; lo-floor > 1000 && i < 64; i++ {
		p := floor + rand.IntN(lo-floor)
		if !handOut(p) {
			continue
		}
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			l.Close()
			return p
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}

// handedOut are the ports FreePort returned in this test binary. A test
// often reserves several ports by number and binds them later (a region's
// link, then its memcached on another FreePort): drawing one twice would
// give two programs the same port, so a port is handed out once per
// binary. The draw is from some 22,000 ports, which a test binary does not
// exhaust.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// handOut reports whether p was never handed out before, and marks it.
func handOut(p int) bool {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports[p] {
		return false
	}
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	handedOut.ports[p] = true
	return true
}
