package proxy_test

import (
	"context"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/internal/memcachedtest"
)

// roundLog is a gnet handler that logs, in order, the bytes each callback
// read and every end of a round (gnet.SetRoundEnd, which the proxy's tier
// flush rides on).
type roundLog struct {
	gnet.BuiltinEventEngine
	booted chan gnet.Engine
	opened chan gnet.Conn
	hooked bool // touched on the one loop only

	mu  sync.Mutex
	log []string
}

func (h *roundLog) OnBoot(e gnet.Engine) gnet.Action {
	h.booted <- e
	return gnet.None
}

func (h *roundLog) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	if !h.hooked {
		h.hooked = true
		if err := gnet.SetRoundEnd(c.EventLoop(), func() { h.add("end") }); err != nil {
			panic(err)
		}
	}
	h.opened <- c
	return nil, gnet.None
}

func (h *roundLog) OnTraffic(c gnet.Conn) gnet.Action {
	b, _ := c.Next(-1)
	h.add(string(b))
	return gnet.None
}

func (h *roundLog) add(s string) {
	h.mu.Lock()
	h.log = append(h.log, s)
	h.mu.Unlock()
}

func (h *roundLog) snapshot() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.log)
}

// TestRoundEndAfterEveryEventOfARound: the round-end hook the carried gnet
// adds runs once the callbacks for every event one poll returned have run,
// and once per round, not per callback: two clients whose requests arrive
// together are read, then the round ends. The loop is held in a task while
// both write, so that one poll returns both.
func TestRoundEndAfterEveryEventOfARound(t *testing.T) {
	h := &roundLog{booted: make(chan gnet.Engine, 1), opened: make(chan gnet.Conn, 2)}
	addr, eng, done := runGnet(t, h, 1, h.booted)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := eng.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		<-done
	}()

	var clients []net.Conn
	var conns []gnet.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
		select {
		case gc := <-h.opened:
			conns = append(conns, gc)
		case <-time.After(10 * time.Second):
			t.Fatal("connection not opened")
		}
	}

	// Hold the loop in a task, write from both clients, then let it go.
	held, release := make(chan struct{}), make(chan struct{})
	err := conns[0].EventLoop().Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		h.mu.Lock()
		h.log = []string{"task"}
		h.mu.Unlock()
		close(held)
		<-release
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	<-held
	for i, c := range clients {
		if _, err := c.Write([]byte{'x' + byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	close(release)

	deadline := time.Now().Add(10 * time.Second)
	var got []string
	for {
		got = h.snapshot()
		if len(got) >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// The task's round ends, then the next round reads both clients and ends.
	if len(got) != 5 || got[0] != "task" || got[1] != "end" || got[4] != "end" ||
		!(got[2] == "x" && got[3] == "y" || got[2] == "y" && got[3] == "x") {
		t.Fatalf("log %q, want [task end x y end] (x and y in either order)", got)
	}
}

// runGnet runs a gnet engine of h with loops event loops on a free
// loopback port, and waits for it to boot (h's OnBoot sends the engine on
// booted). done receives what gnet.Run returned.
func runGnet(t *testing.T, h gnet.EventHandler, loops int, booted <-chan gnet.Engine) (addr string, eng gnet.Engine, done <-chan error) {
	t.Helper()
	addr = "127.0.0.1:" + strconv.Itoa(memcachedtest.FreePort(t))
	ran := make(chan error, 1)
	go func() {
		ran <- gnet.Run(h, "tcp://"+addr, gnet.WithNumEventLoop(loops), gnet.WithMulticore(true))
	}()
	select {
	case eng = <-booted:
	case err := <-ran:
		t.Fatalf("gnet.Run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("engine did not boot")
	}
	return addr, eng, ran
}
