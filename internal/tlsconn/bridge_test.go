package tlsconn

// The bridge, the design this package replaced, kept as the benchmark's
// baseline (bench_test.go): gnet owns one end of a Unix socket pair and
// two goroutines per connection copy between the other end and the TLS
// connection, decrypting and encrypting.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// errBridgeClosed: the Bridge was closed.
var errBridgeClosed = errors.New("bridge: closed")

// Bridge wraps TLS connections for an event loop.
type Bridge struct {
	mu     sync.Mutex // guards conns and closed
	conns  map[*tls.Conn]struct{}
	closed bool
	wg     sync.WaitGroup // the pumps
}

// Wrap starts pumping between tc (handshaken or not: the first read
// handshakes) and a new socket pair, and returns the pair's other end for
// the event loop. The Bridge owns tc from the call on, error or not.
func (b *Bridge) Wrap(tc *tls.Conn) (net.Conn, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		_ = tc.Close()
		return nil, fmt.Errorf("bridge: socketpair: %w", err)
	}
	mine, err := fileConn(fds[0])
	if err != nil {
		_ = syscall.Close(fds[1])
		_ = tc.Close()
		return nil, err
	}
	theirs, err := fileConn(fds[1])
	if err != nil {
		_ = mine.Close()
		_ = tc.Close()
		return nil, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		_ = mine.Close()
		_ = theirs.Close()
		_ = tc.Close()
		return nil, errBridgeClosed
	}
	if b.conns == nil {
		b.conns = map[*tls.Conn]struct{}{}
	}
	b.conns[tc] = struct{}{}
	b.wg.Add(2)
	b.mu.Unlock()
	var once sync.Once
	shut := func() {
		once.Do(func() {
			_ = tc.Close()
			_ = mine.Close()
			b.mu.Lock()
			delete(b.conns, tc)
			b.mu.Unlock()
		})
	}
	go func() { // network → loop
		defer b.wg.Done()
		_, err := io.Copy(mine, tc)
		if err != nil {
			shut()
			return
		}
		_ = mine.(*net.UnixConn).CloseWrite()
	}()
	go func() { // loop → network
		defer b.wg.Done()
		_, _ = io.Copy(tc, mine)
		shut() // the loop closed its end (or failed): nothing more to say
	}()
	return theirs, nil
}

func fileConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "bridge")
	c, err := net.FileConn(f) // duplicates the descriptor
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	return c, nil
}

// Close closes every wrapped TLS connection and waits for the pumps. It
// is idempotent; Wrap fails after it.
func (b *Bridge) Close() {
	b.mu.Lock()
	b.closed = true
	conns := make([]*tls.Conn, 0, len(b.conns))
	for tc := range b.conns {
		conns = append(conns, tc)
	}
	b.mu.Unlock()
	for _, tc := range conns {
		_ = tc.Close()
	}
	b.wg.Wait()
}
