//go:build linux

package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// whoServes answers every read with the id of the goroutine that ran the
// callback and the callback's loop, one line: "goroutine loop".
type whoServes struct {
	gnet.BuiltinEventEngine
	booted chan gnet.Engine
	opened chan gnet.Conn
}

func (h *whoServes) OnBoot(e gnet.Engine) gnet.Action {
	h.booted <- e
	return gnet.None
}

func (h *whoServes) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	h.opened <- c
	return nil, gnet.None
}

func (h *whoServes) OnTraffic(c gnet.Conn) gnet.Action {
	_, _ = c.Next(-1)
	var buf [64]byte
	f := bytes.Fields(buf[:runtime.Stack(buf[:], false)]) // "goroutine N [running]:"
	_, _ = c.Write(append(f[1], '\n'))
	return gnet.None
}

type whoClient struct {
	c  net.Conn
	r  *bufio.Reader
	el gnet.EventLoop
}

// ask reports the goroutine that served one read of cl.
func (cl whoClient) ask(t *testing.T) string {
	t.Helper()
	_ = cl.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := cl.c.Write([]byte("?")); err != nil {
		t.Fatal(err)
	}
	line, err := cl.r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return line[:len(line)-1]
}

// TestParkedLoopServedByHost: a loop parked with gnet.Park (the carried
// gnet's loop merging, which the proxy's merge.go drives) keeps its
// connections, and the host's goroutine serves them, new ones included;
// released, it serves them on its own goroutine again; an engine stops
// with a loop parked.
func TestParkedLoopServedByHost(t *testing.T) {
	h := &whoServes{booted: make(chan gnet.Engine, 1), opened: make(chan gnet.Conn, 8)}
	addr, eng, done := runGnet(t, h, 2, h.booted)
	stopped := false
	stop := func() {
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := eng.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the engine did not end with a loop parked")
		}
	}
	defer func() {
		if !stopped {
			stop()
		}
	}()

	dial := func() whoClient {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		select {
		case gc := <-h.opened:
			return whoClient{c: c, r: bufio.NewReader(c), el: gc.EventLoop()}
		case <-time.After(10 * time.Second):
			t.Fatal("connection not opened")
		}
		return whoClient{}
	}
	// gnet spreads connections over its loops: dial until both have one.
	a := dial()
	var b whoClient
	for i := 0; i < 8 && b.c == nil; i++ {
		if c := dial(); c.el != a.el {
			b = c
		}
	}
	if b.c == nil {
		t.Fatal("every connection landed on one loop")
	}
	ga, gb := a.ask(t), b.ask(t)
	if ga == gb {
		t.Fatalf("two loops served by one goroutine %s before any park", ga)
	}

	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("not within 10 s: %s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := gnet.Park(b.el, a.el); err != nil {
		t.Fatal(err)
	}
	until("the parked loop's connection served by the host", func() bool { return b.ask(t) == ga })
	if got := a.ask(t); got != ga {
		t.Fatalf("the host's own connection served by %s, want %s", got, ga)
	}
	w0, _ := gnet.WaitTime(b.el)
	// A connection opened while parked lands on either loop: all served
	// by the host.
	for range 4 {
		if c := dial(); c.ask(t) != ga {
			t.Fatalf("a connection of loop %v opened while parked: not served by the host", c.el == b.el)
		}
	}
	if got := b.ask(t); got != ga {
		t.Fatalf("parked loop's connection served by %s, want the host's %s", got, ga)
	}
	if w1, _ := gnet.WaitTime(b.el); w1 != w0 {
		t.Fatalf("a parked loop waited on its own: %v then %v", w0, w1)
	}

	// Released from a task on the host, the loop serves its own.
	err := a.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		return gnet.ReleaseGuests(a.el)
	}))
	if err != nil {
		t.Fatal(err)
	}
	until("the released loop serves its connection itself", func() bool { return b.ask(t) != ga })

	// Parked again, the engine stops.
	if err := gnet.Park(b.el, a.el); err != nil {
		t.Fatal(err)
	}
	until("parked again", func() bool { return b.ask(t) == ga })
	stop()
}
