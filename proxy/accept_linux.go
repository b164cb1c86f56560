//go:build linux

package proxy

import (
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// rawAccept takes connections off a Go listener with accept4 itself and
// hands each socket to gnet as it is (Engine.RegisterSocket). Go's Accept
// would build a net.Conn, register it with Go's poller and read both
// addresses, and gnet would then duplicate the descriptor, close Go's
// and keep both addresses: about a kilobyte of garbage and several more
// system calls per connection (poller registration, getsockname, the
// duplicate and its close), and 190 bytes kept for its life.
type rawAccept struct {
	f      *os.File // a duplicate of the listener: Go's poller waits on it
	rc     syscall.RawConn
	fn     func(uintptr) bool // accept, made once: a closure per call would allocate
	fd     int
	sa     unix.Sockaddr
	err    error
	closed atomic.Bool
}

// newRawAccept prepares raw accepts on ln, or returns nil when ln has no
// descriptor to duplicate (the caller then uses ln.Accept). A Go
// listener's own SyscallConn cannot wait for readiness (its Read is not
// supported), so the accepts go through a duplicate opened as a file,
// which Go's poller waits on as long as the descriptor is non-blocking
// (the duplicate shares the listener's flags, which Go set so). A
// blocking one would hold an accept in the kernel that closing cannot
// end, so it is refused.
func newRawAccept(ln net.Listener) *rawAccept {
	fl, ok := ln.(interface{ File() (*os.File, error) })
	if !ok {
		return nil
	}
	f, err := fl.File()
	if err != nil {
		return nil
	}
	rc, err := f.SyscallConn()
	nonblock := false
	if err == nil {
		err = rc.Control(func(fd uintptr) {
			fl, ferr := unix.FcntlInt(fd, unix.F_GETFL, 0)
			nonblock = ferr == nil && fl&unix.O_NONBLOCK != 0
		})
	}
	if err != nil || !nonblock {
		_ = f.Close()
		return nil
	}
	r := &rawAccept{f: f, rc: rc}
	r.fn = r.accept
	return r
}

// close ends a wait in next, which then returns net.ErrClosed.
func (r *rawAccept) close() {
	r.closed.Store(true)
	_ = r.f.Close()
}

// accept is called by RawConn.Read with the listener's descriptor; false
// asks it to wait until the listener is readable.
func (r *rawAccept) accept(lfd uintptr) bool {
	for {
		r.fd, r.sa, r.err = unix.Accept4(int(lfd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch r.err {
		case unix.EINTR, unix.ECONNABORTED:
			continue // a client that left before we took it: take the next
		case unix.EAGAIN:
			return false
		}
		return true
	}
}

// Keep-alive as Go's listener sets it on what it accepts (the defaults of
// net.KeepAliveConfig); Nagle is off as well, as Go leaves it.
const (
	keepAliveIdle     = 15 // seconds
	keepAliveInterval = 15
	keepAliveCount    = 9
)

// next accepts one connection and registers it with eng, mark as its gnet
// context. The socket options' errors are ignored, as Go's accept ignores
// them: a socket that cannot take them is one the peer already reset.
func (r *rawAccept) next(eng gnet.Engine, mark any) error {
	if err := r.rc.Read(r.fn); err != nil {
		if r.closed.Load() {
			return net.ErrClosed
		}
		return err
	}
	if r.err != nil {
		return fmt.Errorf("accept: %w", r.err)
	}
	fd, sa := r.fd, r.sa
	r.sa = nil
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, keepAliveIdle)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, keepAliveInterval)
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, keepAliveCount)
	if err := eng.RegisterSocket(fd, sa, mark); err != nil {
		_ = unix.Close(fd)
		return fmt.Errorf("%w: %v", errEngineGone, err)
	}
	return nil
}
