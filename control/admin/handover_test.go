package admin

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// A server started on a given socket serves on it; StopAccepting leaves
// the socket to its other holder (a successor) while Stop is still to come.
func TestStartOnAndStopAccepting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	other, err := net.FileListener(f)
	_ = f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s, err := New(Config{Listen: "127.0.0.1:1", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartOn(ln); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())
	url := "http://" + ln.Addr().String() + "/healthz"
	cl := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := cl.Get(url)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz on the given socket: %v %v", resp, err)
	}
	_ = resp.Body.Close()
	if s.Listener() != ln {
		t.Fatal("Listener is not the socket given")
	}
	s.StopAccepting()
	go func() {
		_ = http.Serve(other, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "successor") }))
	}()
	resp, err = cl.Get(url)
	if err != nil {
		t.Fatalf("after StopAccepting the socket refused: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(b) != "successor" {
		t.Fatalf("after StopAccepting answered by %q, want the other holder", b)
	}
}
