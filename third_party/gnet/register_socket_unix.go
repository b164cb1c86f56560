//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package gnet

import (
	"net"

	"golang.org/x/sys/unix"

	errorx "github.com/panjf2000/gnet/v2/pkg/errors"
	"github.com/panjf2000/gnet/v2/pkg/queue"
	"github.com/panjf2000/gnet/v2/pkg/socket"
)

// RegisterSocket hands the engine a connected stream socket that the
// caller accepted itself, with remote as accept returned it. It is
// Register without a net.Conn: no duplicate of the descriptor, no address
// parsing, and no net.Addr kept per connection (RemoteAddr builds one from
// remote, LocalAddr asks the kernel, each when called).
//
// On a nil error the engine owns fd and the event loop the load balancer
// picks opens it (OnOpen) shortly after; if that fails, the loop closes fd.
// On an error the caller still owns fd. ctx is the connection's context
// (what Conn.Context returns until SetContext), given as a value rather
// than in a context.Context so that registering allocates nothing besides
// the connection.
func (e Engine) RegisterSocket(fd int, remote unix.Sockaddr, ctx any) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if e.eng.isShutdown() {
		return errorx.ErrEngineInShutdown
	}
	if e.eng.eventLoops.len() == 0 {
		return errorx.ErrEmptyEngine
	}
	var network string
	switch remote.(type) {
	case *unix.SockaddrInet4, *unix.SockaddrInet6:
		network = "tcp"
	case *unix.SockaddrUnix:
		network = "unix"
	default:
		return errorx.ErrUnsupportedProtocol
	}
	var addr net.Addr
	if e.eng.opts.LB == SourceAddrHash {
		addr = socket.SockaddrToTCPOrUnixAddr(remote)
	}
	el := e.eng.eventLoops.next(addr)
	c := newStreamConn(network, fd, el, remote, nil, nil)
	c.ctx = ctx
	if err := el.poller.Trigger(queue.LowPriority, el.register, c); err != nil {
		c.release()
		return err
	}
	return nil
}
