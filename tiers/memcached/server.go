package memcached

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/tiers/memcached/metacodec"
)

// server is one memcached server of the pool: its connections (one per
// event loop) and its health.
type server struct {
	addr  string
	conns []*bconn // one per event loop; fixed before the server is routable

	state   atomic.Uint32 // healthState, read by every request
	failing atomic.Bool   // a failure streak is running: successes must take mu
	retired atomic.Bool   // removed from the pool
	upEpoch atomic.Uint64 // bumped when a probe brings the server back: ends reconnect backoffs
	downGen atomic.Uint64 // h.downs: the down spell every loop must fence (returning.go)

	mu      sync.Mutex // guards h, probing and suspects
	h       health
	probing bool // a probe goroutine runs
	// suspects are the local addresses of connections we dropped with
	// requests outstanding: the server may still execute those requests,
	// so it returns only once it lists none of them (returning.go).
	suspects     map[string]struct{}
	returnChecks uint64 // "stats conns" asked while returning
	// mustFlush: the returning protocol must flush, for incarnation
	// flushFor of the topology, whatever FlushOnReturn says (reentry.go).
	mustFlush bool
	flushFor  uint64

	// Preallocated failures, so failing fast costs no allocation.
	errDown, errUnreachable error
}

func (p *Pool) newServer(addr string) *server {
	s := &server{addr: addr, h: newHealth(p.cfg.FailureThreshold, int64(p.cfg.ProbeInterval))}
	s.errDown = &BackendError{Addr: addr, Err: ErrDown}
	s.errUnreachable = &BackendError{Addr: addr, Err: ErrUnreachable}
	return s
}

// success records a reply. It costs one atomic load unless a failure
// streak is running.
func (s *server) success() {
	if !s.failing.Load() {
		return
	}
	s.mu.Lock()
	s.h.success()
	if s.h.fails == 0 && s.h.state == stateUp {
		// The server answers: it is not hung, so the connections dropped
		// during the streak are read to their end as promptly as this one.
		clear(s.suspects)
	}
	s.failing.Store(s.h.fails > 0)
	s.mu.Unlock()
}

// failure records a failed connect or request; at the threshold the server
// is marked down and probed until it answers.
func (s *server) failure(p *Pool) {
	s.mu.Lock()
	down := s.h.failure(p.now())
	s.publishLocked(p, down)
	s.mu.Unlock()
	if down {
		p.cfg.Logger.Warn("memcached server marked down", "server", s.addr,
			"failures", p.cfg.FailureThreshold, "probe_interval", p.cfg.ProbeInterval)
	}
}

// taint marks the server down at once because a request that may change
// its data failed while it was up (returning.go says why). It must run
// before that request's Done: the caller's reply may let a client read
// again, and that read must not reach this server.
func (s *server) taint(p *Pool) {
	s.mu.Lock()
	down := s.h.taint(p.now())
	s.publishLocked(p, down)
	s.mu.Unlock()
	if down {
		p.cfg.Logger.Warn("memcached server marked down: a write to it failed", "server", s.addr,
			"probe_interval", p.cfg.ProbeInterval)
	}
}

// publishLocked makes the health machine's state visible to the loops
// after a failure or a taint, and starts the prober when the server has
// just gone down.
func (s *server) publishLocked(p *Pool, down bool) {
	s.failing.Store(s.h.fails > 0)
	if down {
		s.downGen.Store(s.h.downs) // before the state: a loop that sees down fences this spell
	}
	s.state.Store(uint32(s.h.state))
	if down && !s.probing && !s.retired.Load() {
		s.probing = p.goroutine(func() { p.probeLoop(s) })
	}
}

// probeLoop probes a down server every ProbeInterval until it answers, the
// server is removed, or the pool closes.
func (p *Pool) probeLoop(s *server) {
	released := false // probing was cleared together with the move to up
	defer func() {
		if released {
			return
		}
		s.mu.Lock()
		s.probing = false
		s.mu.Unlock()
	}()
	t := time.NewTimer(p.cfg.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		if s.retired.Load() {
			return
		}
		s.mu.Lock()
		due := s.h.probeDue(p.now())
		s.state.Store(uint32(s.h.state))
		wait := s.h.untilProbe(p.now())
		s.mu.Unlock()
		if !due {
			t.Reset(time.Duration(max(wait, int64(time.Millisecond))))
			continue
		}
		nc, r, err := p.probe(s.addr)
		s.mu.Lock()
		answered := s.h.probeResult(err == nil, p.now())
		s.state.Store(uint32(s.h.state))
		gen := s.h.downs
		s.mu.Unlock()
		if !answered && nc != nil {
			_ = nc.Close()
		}
		if answered {
			err = p.makeSafe(s, nc, r, gen)
			_ = nc.Close()
			s.mu.Lock()
			up := s.h.returned(err == nil, p.now())
			s.state.Store(uint32(s.h.state))
			s.failing.Store(s.h.fails > 0)
			if up && s.mustFlush {
				// A re-entry flush was asked for after this spell's
				// flush: one more spell.
				up = false
				if s.h.force(p.now()) {
					s.downGen.Store(s.h.downs)
				}
				s.state.Store(uint32(s.h.state))
			}
			if up {
				// In the same critical section as up: a mark-down
				// that follows at once finds no prober and starts one.
				s.probing, released = false, true
			}
			s.mu.Unlock()
			if up {
				s.upEpoch.Add(1)
				p.cfg.Logger.Info("memcached server back up", "server", s.addr, "flushed", p.cfg.FlushOnReturn)
				return
			}
			if err != nil {
				p.cfg.Logger.Warn("memcached server answered but could not be made safe", "server", s.addr, "err", err)
			}
		}
		t.Reset(p.cfg.ProbeInterval)
	}
}

// probe connects to addr and asks for its version. On success the caller
// owns the connection, which the returning protocol goes on using.
func (p *Pool) probe(addr string) (net.Conn, *bufio.Reader, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	defer cancel()
	nc, err := p.dialServer(ctx, addr)
	if err != nil {
		return nil, nil, err
	}
	r := bufio.NewReaderSize(nc, 4096)
	if err := p.probeVersion(nc, r); err != nil {
		_ = nc.Close()
		return nil, nil, err
	}
	return nc, r, nil
}

func (p *Pool) probeVersion(nc net.Conn, r *bufio.Reader) error {
	_ = nc.SetDeadline(time.Now().Add(p.cfg.DialTimeout + p.cfg.RequestTimeout))
	if _, err := nc.Write(metacodec.AppendVersion(nil)); err != nil {
		return err
	}
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	var rp metacodec.Reply
	if n, err := metacodec.ParseReply(line, 0, &rp); err != nil || n == 0 || rp.Code != metacodec.CodeVersion {
		return fmt.Errorf("%w: probe got %q", ErrProtocol, line)
	}
	return nil
}
