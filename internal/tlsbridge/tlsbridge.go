// Package tlsbridge lets an event loop that can only own plain sockets
// (gnet) serve a TLS connection: the TLS side stays with Go's crypto/tls
// on two goroutines, which copy the plaintext to and from one end of a
// Unix socket pair; the other end, a real descriptor, goes to the event
// loop like any accepted or dialled connection.
//
// Data flow: bytes read from the TLS connection are decrypted by
// crypto/tls and written to the pair; bytes the loop writes to its end
// are read from the pair and encrypted onto the TLS connection. EOF on
// either side half-closes the other, and an error closes both.
//
// Goroutines: a Bridge owns two per connection it wraps. They end when
// either side closes; Close closes every TLS connection still open and
// waits for them, so it bounds its owner's shutdown. The plaintext never
// leaves the process (the pair is anonymous).
package tlsbridge

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

// ErrClosed: the Bridge was closed.
var ErrClosed = errors.New("tlsbridge: closed")

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
		return nil, fmt.Errorf("tlsbridge: socketpair: %w", err)
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
		return nil, ErrClosed
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
	f := os.NewFile(uintptr(fd), "tlsbridge")
	c, err := net.FileConn(f) // duplicates the descriptor
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("tlsbridge: %w", err)
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
