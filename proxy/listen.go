package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/internal/tlsconn"
)

// The server accepts client connections itself and hands each to gnet,
// instead of letting gnet listen: gnet's acceptor treats any accept error
// other than a transient one as fatal, so at the descriptor limit (EMFILE)
// its main reactor exits and the port stays closed for good. Accepting
// here lets the server back off and accept again once descriptors free, as
// memcached does, and say so through Ready. The listener is Go's, which
// sets SO_REUSEADDR, so a restart binds at once even while the previous
// process's connections sit in TIME_WAIT.
//
// A plain connection is accepted with accept4 and given to gnet as a bare
// socket (accept_linux.go, Engine.RegisterSocket); a TLS one is accepted
// by Go's listener, since crypto/tls handshakes on a net.Conn, and given
// to gnet with Engine.Register once the handshake is done (tls.go).

// gnet registers connections only with an engine that listens somewhere
// (Engine.Validate), so the engine is given an idle listener: a Unix socket
// in a directory of its own that only this user can enter. Nothing is
// meant to connect to it; a connection that did would be served like any
// client.
type idleListener struct {
	dir  string
	addr string // gnet's form: unix://path
}

func newIdleListener() (*idleListener, error) {
	dir, err := os.MkdirTemp("", "strata-")
	if err != nil {
		return nil, fmt.Errorf("idle listener: %w", err)
	}
	return &idleListener{dir: dir, addr: "unix://" + filepath.Join(dir, "idle.sock")}, nil
}

// remove deletes the socket's directory once the engine has stopped.
func (l *idleListener) remove() { _ = os.RemoveAll(l.dir) }

// acceptor is the accept side of the server. Its goroutine is owned by the
// Server: Start starts it, Stop and Drain close ln, which ends it, and
// done is closed when it has returned.
type acceptor struct {
	ln net.Listener
	// link: the region-link listener; its connections are marked so that
	// every request parsed on them is a link request (link.go).
	link bool
	// tls makes each connection a TLS one (tls.go): the client listener's
	// with Config.TLS, the link listener's with WithLinkTLS. store, on the
	// client listener, counts its handshakes.
	tls   *tls.Config
	store *tlsconn.Store
	done  chan struct{}
	// raw accepts without Go's net.Conn (accept_linux.go); nil with TLS,
	// off Linux, or for a listener that exposes no descriptor.
	raw *rawAccept
	// freed is signalled (without blocking) when a client connection
	// closes: a descriptor came back, so a paused accept may try again.
	freed chan struct{}
	// paused holds the error that made accepting pause, nil while accepting.
	paused atomic.Pointer[error]
}

func newAcceptor(ln net.Listener, link bool, t *tls.Config, store *tlsconn.Store) *acceptor {
	a := &acceptor{ln: ln, link: link, tls: t, store: store, done: make(chan struct{}), freed: make(chan struct{}, 1)}
	if t == nil {
		a.raw = newRawAccept(ln)
	}
	return a
}

// Accept back-off bounds: the first retry after a failed accept waits
// minAcceptDelay, each further failure doubles it up to maxAcceptDelay. A
// connection closing cuts the wait short.
const (
	minAcceptDelay = 5 * time.Millisecond
	maxAcceptDelay = 500 * time.Millisecond
)

// nextAcceptDelay is the wait after a failed accept, given the previous
// wait (0 after a success).
func nextAcceptDelay(prev time.Duration) time.Duration {
	if prev < minAcceptDelay {
		return minAcceptDelay
	}
	if prev >= maxAcceptDelay/2 {
		return maxAcceptDelay
	}
	return 2 * prev
}

// isResourceLimit reports whether err is an accept or dup failure for want
// of descriptors or kernel memory: waiting helps, failing does not.
func isResourceLimit(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// acceptLoop accepts client connections until the listener closes and
// registers each with one of the engine's event loops (least connections
// first). A failure at the descriptor limit pauses accepting, not
// serving. (Register takes a duplicate of a TLS connection's socket and
// closes Go's, so that registration briefly needs two descriptors.)
func (s *Server) acceptLoop(a *acceptor, eng gnet.Engine) {
	defer close(a.done)
	var delay time.Duration
	for {
		if err := s.acceptOne(a, eng); err != nil {
			if s.acceptFailed(a, err, &delay) {
				return
			}
			continue
		}
		s.scav.accepted()
		delay = 0
		a.paused.Store(nil)
	}
}

// acceptOne accepts one connection and hands it on: to gnet, or to a
// handshake first.
func (s *Server) acceptOne(a *acceptor, eng gnet.Engine) error {
	if a.raw != nil {
		return a.raw.next(eng, a.mark())
	}
	nc, err := a.ln.Accept()
	if err != nil {
		return err
	}
	if a.tls != nil {
		s.acceptTLS(a, eng, nc) // handshakes on a goroutine of its own
		return nil
	}
	return s.register(eng, nc, a.mark())
}

// mark is the gnet context a plain connection from a carries until
// OnOpen: linkMark for the region link's listener, nil for clients.
func (a *acceptor) mark() any {
	if a.link {
		return linkMark{}
	}
	return nil
}

// acceptFailed handles a failed accept or registration: true when the
// loop is over (the listener or the engine is gone), else after the
// back-off (longer each time, cut short by a connection closing).
func (s *Server) acceptFailed(a *acceptor, err error, delay *time.Duration) bool {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, errEngineGone) {
		return true
	}
	if isResourceLimit(err) {
		if a.paused.Load() == nil {
			s.cfg.Logger.Warn("accept paused: out of descriptors; serving open connections", "err", err)
		}
		a.paused.Store(&err)
	} else {
		// A connection reset before we took it, or the like: not a
		// reason to stop accepting, but no reason to spin either.
		s.cfg.Logger.Debug("accept", "err", err)
	}
	*delay = nextAcceptDelay(*delay)
	t := time.NewTimer(*delay)
	select {
	case <-t.C:
	case <-a.freed:
		t.Stop()
	}
	return false
}

var errEngineGone = errors.New("proxy: engine stopped")

// register hands nc to gnet and waits until its event loop has opened it.
// mark, the connection's gnet context until OnOpen reads it, is nil for
// a plain client, linkMark{} for a plain region link, a tlsMark for TLS.
func (s *Server) register(eng gnet.Engine, nc net.Conn, mark any) error {
	ctx := gnet.NewNetConnContext(context.Background(), nc)
	if mark != nil {
		ctx = gnet.NewContext(ctx, mark)
	}
	ch, err := enrolls.enrol(func() (<-chan gnet.RegisteredResult, error) { return eng.Register(ctx) })
	if err != nil {
		_ = nc.Close()
		return fmt.Errorf("%w: %v", errEngineGone, err)
	}
	res, ok := <-ch
	if !ok {
		return errors.New("proxy: registration ended without a result")
	}
	return res.Err // on error gnet has closed nc
}

// connFreed tells a paused acceptor that a descriptor came back.
func (a *acceptor) connFreed() {
	select {
	case a.freed <- struct{}{}:
	default:
	}
}

// Addr is the address the server listens on: the bound one once started
// (so a configured port 0 reads as the port the kernel chose), the
// configured one before.
func (s *Server) Addr() string {
	s.mu.Lock()
	a := s.acc
	s.mu.Unlock()
	if a == nil {
		return s.cfg.Listen
	}
	return a.ln.Addr().String()
}

// Listeners are the listening sockets once started: the clients', the
// plaintext one beside TLS (nil without ListenPlain) and the region link's
// (nil without WithLink); all nil before Start. They stay
// the server's: a caller may read or duplicate them (to hand them to a
// successor process), never close them.
func (s *Server) Listeners() (client, plain, link net.Listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.acc != nil {
		client = s.acc.ln
	}
	if s.pacc != nil {
		plain = s.pacc.ln
	}
	if s.lacc != nil {
		link = s.lacc.ln
	}
	return client, plain, link
}

// Ready reports whether the server takes new connections: nil while it
// accepts; an error before Start, once draining or stopped, and while
// accepting is paused for want of descriptors.
func (s *Server) Ready() error {
	s.mu.Lock()
	a, running := s.acc, s.running
	s.mu.Unlock()
	switch {
	case a == nil || !running:
		return errors.New("proxy: not serving")
	case s.draining.Load():
		return errors.New("proxy: draining")
	}
	select {
	case <-a.done:
		return errors.New("proxy: listener closed")
	default:
	}
	if p := a.paused.Load(); p != nil {
		return fmt.Errorf("proxy: accepting paused: %w", *p)
	}
	return nil
}

// closeListener stops accepting, on the client and the link listener,
// and waits for the accept goroutines.
func (s *Server) closeListener() {
	s.mu.Lock()
	as := []*acceptor{s.acc, s.lacc, s.pacc}
	s.mu.Unlock()
	for _, a := range as {
		if a == nil {
			continue
		}
		_ = a.ln.Close()
		if a.raw != nil {
			a.raw.close()
		}
		<-a.done
	}
}
