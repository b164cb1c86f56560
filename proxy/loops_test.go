package proxy

import (
	"testing"

	"github.com/strata-cache/strata/tiers/memcached"
)

func newLoops(t *testing.T, n int) *Loops {
	t.Helper()
	l, err := NewLoops(n)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLoopsBindOnce: the handle serves the one server built with it, and
// what would use its loops must exist before that server: a pool built
// later could never be started or flushed, so it is refused when built.
func TestLoopsBindOnce(t *testing.T) {
	loops := newLoops(t, 2)
	if _, err := New(Config{Listen: "127.0.0.1:0", Loops: 3}, phased{}, loops); err == nil {
		t.Error("a server of 3 loops on a handle of 2: no error")
	}
	if _, err := New(Config{Listen: "127.0.0.1:0"}, phased{}, nil); err == nil {
		t.Error("a server without a loop handle: no error")
	}
	srv, err := New(Config{Listen: "127.0.0.1:0", Loops: 2}, phased{}, loops)
	if err != nil {
		t.Fatal(err)
	}
	if srv.async {
		t.Error("no user joined, yet the server orders and flushes")
	}
	if _, err := New(Config{Listen: "127.0.0.1:0", Loops: 2}, phased{}, loops); err == nil {
		t.Error("a second server on one handle: no error")
	}
	if err := loops.Join(idleUser{}); err == nil {
		t.Error("Join after the server was built: no error")
	}
	p, err := memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: "127.0.0.1:1"}}}, loops)
	if err == nil {
		_ = p.Close()
		t.Error("a pool built after its server: no error")
	}
	if _, err := memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: "127.0.0.1:1"}}}, nil); err == nil {
		t.Error("a pool without loops: no error")
	}
}

// TestLoopsDefaults: the handle's count is Config.Loops' rule, default
// included, so a server left at 0 agrees with a handle left at 0.
func TestLoopsDefaults(t *testing.T) {
	if _, err := NewLoops(-1); err == nil {
		t.Error("-1 loops: no error")
	}
	if _, err := NewLoops(MaxLoops + 1); err == nil {
		t.Error("MaxLoops+1 loops: no error")
	}
	if _, err := New(Config{Listen: "127.0.0.1:0"}, phased{}, newLoops(t, 0)); err != nil {
		t.Errorf("defaults on both sides: %v", err)
	}
	ran := false
	newLoops(t, 1).Run(0, func() { ran = true }) // no server: nothing can wait on the loop
	if ran {
		t.Error("Run before a server holds the handle ran its function")
	}
}
