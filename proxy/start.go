package proxy

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// Start listens and serves in the background; it returns once the listener
// accepts connections, or with the reason it could not.
func (s *Server) Start() error { return s.StartOn(nil, nil, nil) }

// StartOn is Start on listening sockets already bound (a predecessor's,
// handed over for an upgrade): ln for clients, pln for the plaintext
// listener beside a TLS one (only Config.ListenPlain), lln for the region
// link (only WithLink). A nil one is bound as Start binds it. The server
// owns what it is given, and closes it on error.
func (s *Server) StartOn(ln, pln, lln net.Listener) error {
	s.mu.Lock()
	closeGiven := func() {
		for _, l := range []net.Listener{ln, pln, lln} {
			if l != nil {
				_ = l.Close()
			}
		}
	}
	if s.running {
		s.mu.Unlock()
		closeGiven()
		return errors.New("proxy: already started")
	}
	if lln != nil && s.opts.link == "" || pln != nil && s.cfg.ListenPlain == "" {
		s.mu.Unlock()
		closeGiven()
		return errors.New("proxy: a listener handed over for a listener not configured")
	}
	var err error
	if ln == nil {
		if ln, err = net.Listen("tcp", s.cfg.Listen); err != nil {
			s.mu.Unlock()
			closeGiven()
			return fmt.Errorf("proxy: listen on %s: %w", s.cfg.Listen, err)
		}
	}
	if s.cfg.ListenPlain != "" && pln == nil {
		if pln, err = net.Listen("tcp", s.cfg.ListenPlain); err != nil {
			s.mu.Unlock()
			closeGiven()
			return fmt.Errorf("proxy: listen (plaintext) on %s: %w", s.cfg.ListenPlain, err)
		}
	}
	if s.opts.link != "" && lln == nil {
		if lln, err = net.Listen("tcp", s.opts.link); err != nil {
			s.mu.Unlock()
			_ = ln.Close()
			closeIf(pln)
			return fmt.Errorf("proxy: listen for the region link on %s: %w", s.opts.link, err)
		}
	}
	idle, err := newIdleListener()
	if err != nil {
		s.mu.Unlock()
		_ = ln.Close()
		closeIf(lln)
		closeIf(pln)
		return fmt.Errorf("proxy: %w", err)
	}
	s.running = true
	s.done = make(chan error, 1)
	s.releaseStall = s.stall.Hold()
	enrolls.release() // gnet opened its pool at init; enrol reopens it
	s.mu.Unlock()
	s.started = time.Now()
	h := &handler{srv: s}
	go func() {
		// gnet listens only on the idle socket; acceptLoop feeds it the
		// clients (see listen.go).
		defer idle.remove()
		// Measured at depth 1 and left off: gnet's LockOSThread costs CPU
		// per request (a loop that finds no event yields, and a locked
		// thread then hands its P over: 0.5 futex calls per request),
		// and so does a GOMAXPROCS above Loops (the yield then wakes
		// an idle P's thread, and the loop moves to it), though it
		// stops sysmon retaking the Ps of loops blocked in epoll_wait.
		s.done <- gnet.Run(h, idle.addr,
			gnet.WithNumEventLoop(s.cfg.Loops),
			gnet.WithMulticore(true),
			gnet.WithReusePort(false),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithTicker(true),
			gnet.WithLoadBalancing(gnet.LeastConnections),
			gnet.WithLogger(gnetLogger{s.cfg.Logger}),
		)
	}()
	select {
	case <-s.ticking:
		a := newAcceptor(ln, false, s.serverTLS(), s.tls)
		var la, pa *acceptor
		if pln != nil {
			pa = newAcceptor(pln, false, nil, nil)
		}
		if lln != nil {
			la = newAcceptor(lln, true, s.opts.linkTLS, nil)
		}
		s.mu.Lock()
		s.acc, s.lacc, s.pacc = a, la, pa
		eng := s.eng
		s.mu.Unlock()
		s.stopWatch = s.startWatch()
		// The users get the loops before the first client is accepted.
		for _, u := range s.users {
			u.Start()
		}
		go s.acceptLoop(a, eng)
		if la != nil {
			go s.acceptLoop(la, eng)
		}
		if pa != nil {
			go s.acceptLoop(pa, eng)
		}
		return nil
	case err := <-s.done:
		_ = ln.Close()
		closeIf(lln)
		closeIf(pln)
		if err == nil {
			err = errors.New("engine stopped before booting")
		}
		s.releaseStall()
		return fmt.Errorf("proxy: listen on %s: %w", s.cfg.Listen, err)
	}
}
