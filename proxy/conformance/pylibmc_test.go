package conformance

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
)

// pylibmc speaks the binary protocol through libmemcached when built with
// binary=True; the script drives the commands such a client uses and
// prints "ok" only when every answer is the one memcached gives.
// pylibmcScript drives, with pylibmc speaking the binary protocol
// (binary=True), the commands such a client uses, and prints one line per
// command: its result, or the exception it raised. The lines must match
// those a real memcached gives, and the script itself fails on a result no
// memcached gives (so two servers that both break cannot agree).
const pylibmcScript = `
import sys, pylibmc
mc = pylibmc.Client([sys.argv[1]], binary=True, behaviors={"cas": True})
def do(what, f, *args):
    try:
        r = f(*args)
    except pylibmc.Error as e:
        r = type(e).__name__
    print(what, repr(r))
    return r
def must(what, got, want):
    if got != want:
        raise SystemExit("%s: got %r, want %r" % (what, got, want))
mc.flush_all()
must("set", do("set", mc.set, "k", "v1"), True)
must("get", do("get", mc.get, "k"), "v1")
must("get miss", do("get miss", mc.get, "nx"), None)
do("add existing", mc.add, "k", "x")
do("replace missing", mc.replace, "nx", "x")
must("get bytes", (do("set bytes", mc.set, "b", b"\x00\x01\xff"), do("get bytes", mc.get, "b"))[1], b"\x00\x01\xff")
do("set int", mc.set, "n", 10)
must("incr", do("incr", mc.incr, "n", 5), 15)
must("decr", do("decr", mc.decr, "n", 20), 0)
do("incr missing", mc.incr, "nx", 1)
do("set_multi", mc.set_multi, {"a": "1", "b2": "2", "c": "3"})
must("get_multi", do("get_multi", mc.get_multi, ["a", "b2", "c", "missing"]), {"a": "1", "b2": "2", "c": "3"})
do("append", mc.append, "a", "x")
do("prepend", mc.prepend, "a", "y")
must("get appended", do("get appended", mc.get, "a"), "y1x")
val, cas = mc.gets("a")
print("gets", repr(val), cas > 0)  # CAS values are the server's own
must("cas match", do("cas match", mc.cas, "a", "new", cas), True)
do("cas stale", mc.cas, "a", "newer", cas)
must("get after cas", do("get after cas", mc.get, "a"), "new")
do("touch", mc.touch, "a", 100)
do("touch missing", mc.touch, "nx", 100)
do("delete", mc.delete, "a")
do("delete missing", mc.delete, "a")
do("delete_multi", mc.delete_multi, ["b2", "c"])
do("get deleted", mc.get_multi, ["b2", "c"])
big = "x" * 500000
do("set big", mc.set, "big", big)
must("get big", mc.get("big"), big)
do("set too big", mc.set, "huge", "x" * 2000000)
print("servers", len(mc.get_stats()))
`

// runPylibmc runs the script against addr and against a real memcached
// and fails t unless both ran through and printed the same lines.
func runPylibmc(t *testing.T, addr string) {
	t.Helper()
	want := pylibmcRun(t, memcachedtest.Start(t).Addr)
	if got := pylibmcRun(t, addr); got != want {
		t.Fatalf("pylibmc binary=True through strata:\n%s\nagainst memcached:\n%s", got, want)
	}
	t.Logf("pylibmc binary=True, as against memcached:\n%s", want)
}

func pylibmcRun(t *testing.T, addr string) string {
	t.Helper()
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import pylibmc").Run(); err != nil {
		t.Fatalf("python3 with pylibmc is needed (Debian's python3-pylibmc): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, py, "-c", pylibmcScript, addr)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pylibmc binary=True against %s: %v\nstdout:\n%s\nstderr:\n%s", addr, err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String()
}

func TestPylibmcBinary(t *testing.T) { runPylibmc(t, startStrata(t)) }

func TestPylibmcBinaryOverPools(t *testing.T) { runPylibmc(t, startStrataOverPools(t)) }
