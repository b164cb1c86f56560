// Package testbin finds the programs strata's tests talk to (memcached,
// memccapable, etcd, chromium) and decides what a missing one means. A
// test that needs a real program must not pass without it: it fails,
// saying which Debian package to install. Outside CI a developer may
// choose to skip instead by setting the program's skip variable to 1;
// under CI=true that variable is ignored, so CI can never stay green on
// tests that did not run.
package testbin

import (
	"net"
	"os"
	"os/exec"
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

// FreePort returns a loopback TCP port that was free a moment ago, for a
// program that must be told its port (memcached, etcd); a caller retries
// on another if the port was taken meanwhile.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
