package handoff

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// running is a process's side: a TCP listener offered as "memcached".
type running struct {
	h  *Handoff
	ln net.Listener
}

func (r *running) offer() []Listener {
	return []Listener{{Role: "memcached", Addr: "configured:1", L: r.ln}}
}

func open(t *testing.T, sock string) *Handoff {
	t.Helper()
	h, err := Open(Config{Socket: sock}, "test", quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// echoOnce accepts one connection on ln and writes who served it.
func echoOnce(t *testing.T, ln net.Listener, who string) {
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_, _ = c.Write([]byte(who))
		_ = c.Close()
	}()
}

func servedBy(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHandoverKeepsTheSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "h.sock")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	old := &running{h: open(t, sock), ln: ln}
	if old.h.Inherited() {
		t.Fatal("the first process inherited something")
	}
	if err := old.h.Serve(old.offer); err != nil {
		t.Fatal(err)
	}

	// A successor that gives up before Ready changes nothing.
	quitter := open(t, sock)
	if !quitter.Inherited() || quitter.Take("memcached", "elsewhere:2") != nil {
		t.Fatal("a socket was taken under another address")
	}
	_ = quitter.Close()
	echoOnce(t, old.ln, "old")
	if got := servedBy(t, addr); got != "old" {
		t.Fatalf("after an abandoned handoff served by %q", got)
	}
	select {
	case <-old.h.Successor():
		t.Fatal("an abandoned handoff counted as a takeover")
	default:
	}

	// A successor that takes over: the old process closes its copy, the
	// socket goes on accepting in the new one, and the path is the new
	// one's.
	nh := open(t, sock)
	nl := nh.Take("memcached", addr) // by bound address
	if nl == nil {
		t.Fatal("the successor did not get the socket")
	}
	if err := nh.Serve(func() []Listener { return []Listener{{Role: "memcached", Addr: "configured:1", L: nl}} }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-old.h.Successor():
	case <-time.After(5 * time.Second):
		t.Fatal("the old process was not told")
	}
	select {
	case <-nh.Gone():
		t.Fatal("Gone before the predecessor closed")
	default:
	}
	_ = old.ln.Close()
	_ = old.h.Close()
	select {
	case <-nh.Gone():
	case <-time.After(5 * time.Second):
		t.Fatal("the successor did not learn its predecessor finished")
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the old process removed the successor's socket: %v", err)
	}
	echoOnce(t, nl, "new")
	if got := servedBy(t, addr); got != "new" {
		t.Fatalf("after the takeover served by %q", got)
	}

	// And the successor hands over in turn.
	third := open(t, sock)
	if third.Take("memcached", "configured:1") == nil {
		t.Fatal("a second handoff did not pass the socket (by configured address)")
	}
	if err := third.Serve(func() []Listener { return nil }); err != nil {
		t.Fatal(err)
	}
	<-nh.Successor()
}

func TestStaleSocketIsReplaced(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "h.sock")
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	_ = l.Close() // the file stays, nobody listens: a crashed process's
	h := open(t, sock)
	if h.Inherited() {
		t.Fatal("inherited from a stale socket")
	}
	if err := h.Serve(func() []Listener { return nil }); err != nil {
		t.Fatal(err)
	}
	_ = h.Close()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("socket left behind after a clean close: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		sock string
		ok   bool
	}{{"", true}, {"/run/strata.sock", true}, {"run/strata.sock", false}, {"/" + string(make([]byte, 120)), false}} {
		if err := (Config{Socket: c.sock}).Validate(); (err == nil) != c.ok {
			t.Errorf("%q: %v", c.sock, err)
		}
	}
}
