package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// drain runs srv.Drain in the background and returns its result channel.
func drain(t *testing.T, srv interface {
	Drain(context.Context) error
}) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- srv.Drain(ctx)
	}()
	return done
}

// countReplies reads get replies ("VALUE …" + data + "END", or "END")
// until EOF and returns how many ENDs came.
func countReplies(t *testing.T, c net.Conn) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	n := 0
	for {
		l, err := r.ReadString('\n')
		if err == io.EOF && l == "" {
			return n
		}
		if err != nil {
			t.Fatalf("after %d replies: %v (%q)", n, err, l)
		}
		if l == "END\r\n" {
			n++
		}
	}
}

// A drain answers every request a connection received, pipelined ones
// still in the buffers included, before it closes the connection.
func TestDrainAnswersEveryRequestReceived(t *testing.T) {
	srv := startOneLoop(t, 0)
	c := dial(t, srv.Addr())
	const n = 20000 // about 220 KB: many callbacks' worth
	burst := bytes.Repeat([]byte("get small\r\n"), n)
	wrote := make(chan error, 1)
	go func() { _, err := c.Write(burst); wrote <- err }()
	// The first reply says the server is at work on the burst; the drain
	// starts with most of it still buffered.
	r := bufio.NewReader(c)
	if l, err := r.ReadString('\n'); err != nil || l != "VALUE small 0 5\r\n" {
		t.Fatalf("first reply %q %v", l, err)
	}
	done := drain(t, srv)
	got := 0
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			if err != io.EOF || l != "" {
				t.Fatalf("after %d replies: %v (%q)", got, err, l)
			}
			break
		}
		if l == "END\r\n" {
			got++
		}
	}
	if err := <-wrote; err != nil {
		t.Fatalf("the burst was not all sent: %v", err)
	}
	if got != n {
		t.Fatalf("%d of %d requests answered before the drain closed the connection", got, n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A connection with half a request buffered is not between requests: the
// drain waits for the rest and answers it.
func TestDrainWaitsForAPartialRequest(t *testing.T) {
	srv := startOneLoop(t, 0)
	c, idle := accepted(t, srv.Addr()), accepted(t, srv.Addr())
	if _, err := io.WriteString(c, "get sm"); err != nil {
		t.Fatal(err)
	}
	done := drain(t, srv)
	// The idle connection is between requests: closed at once.
	_ = idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(idle); err != nil || len(b) != 0 {
		t.Fatalf("idle connection: %q %v", b, err)
	}
	if _, err := io.WriteString(c, "all\r\n"); err != nil {
		t.Fatal(err)
	}
	if got := countReplies(t, c); got != 1 {
		t.Fatalf("%d replies to the request completed during the drain", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// accepted dials addr and makes a round trip, so the server has accepted
// the connection: one still in the backlog of a listener that closes is
// reset, not drained.
func accepted(t *testing.T, addr string) net.Conn {
	t.Helper()
	c := dial(t, addr)
	if _, err := io.WriteString(c, "version\r\n"); err != nil {
		t.Fatal(err)
	}
	var b [64]byte
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(b[:])
	if err != nil || !strings.HasPrefix(string(b[:n]), "VERSION") || !strings.HasSuffix(string(b[:n]), "\r\n") {
		t.Fatalf("version: %q %v", b[:n], err)
	}
	return c
}
