package memcached

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/memcached/metacodec"
)

// The returning protocol: what happens between a down server answering a
// probe and its being routable again. The package doc states the argument;
// this file holds the mechanism.

// ErrNotSafe is why a returning server went down again: it could not be
// made safe within ReturnTimeout.
var ErrNotSafe = errors.New("server could not be made safe to return")

// maxStatsConnsReply bounds the "stats conns" reply the prober reads: a
// few lines per connection, and memcached's default limit is 1024
// connections; a server with far more is read up to this and judged
// not yet safe.
const maxStatsConnsReply = 4 << 20

// mutates reports whether e may change what the server stores: anything
// but a plain read (a touch or an mg that creates an item changes it too).
// Not !tiers.Request.IsRead on purpose: an mg R only hands out a token,
// and stores nothing a skipped copy of it could leave behind.
func (e *pend) mutates() bool {
	if e.fan != nil {
		return true // flush_all
	}
	r := &e.op.Req
	return r.Kind != tiers.KindGet || r.HasTTL || r.Vivify
}

// mustLand reports whether skipping e, a write known not to have run,
// can leave a value that should have gone: every write but an add, which
// only ever fills a key that is absent.
func (e *pend) mustLand() bool {
	return e.mutates() && (e.fan != nil || e.op.Req.Kind != tiers.KindSet || e.op.Req.Mode != tiers.ModeAdd)
}

// taintIfWrites runs on the loop just before bc fails its whole queue
// without replies. In a pool that flushes on return, it takes the server
// down at once, before any of them completes, when the queue holds a
// write that was sent (it may still run later, after a newer write's
// invalidation: an add of an old value, a delete of a new one) or one
// never sent that had to land (a delete whose copy stays). Only the
// returning protocol (drain, then flush) makes such a server safe to read
// again. sent says whether the queue may have reached the server.
func (bc *bconn) taintIfWrites(sent bool) {
	if !bc.p.cfg.FlushOnReturn {
		return
	}
	pred := (*pend).mustLand
	if sent {
		pred = (*pend).mutates
	}
	// A write still in the backlog was never sent: it is skipped too.
	if bc.q.AnyOf(pred) || bc.backlog.AnyOf((*pend).mustLand) {
		bc.srv.taint(bc.p)
	}
}

// taintIfSkipped is taintIfWrites for one write known not to have run:
// refused before it was queued, or answered with an error.
func (bc *bconn) taintIfSkipped(e *pend) {
	if bc.p.cfg.FlushOnReturn && e.mustLand() {
		bc.srv.taint(bc.p)
	}
}

// suspect records, on the loop, that the current connection is about to
// be dropped; if it carried requests that have no reply yet, the server may
// still execute them, so its local address becomes a suspect.
func (bc *bconn) suspect() {
	if bc.c == nil || bc.cur == nil || bc.q.Len() == 0 || bc.cur.local == "" || bc.greeting {
		return
	}
	s := bc.srv
	s.mu.Lock()
	if s.suspects == nil {
		s.suspects = map[string]struct{}{}
	}
	s.suspects[bc.cur.local] = struct{}{}
	s.mu.Unlock()
}

// fence runs on the loop while the server is not up: it drops this loop's
// connection or dial (failing what waits on it with "is down") and records
// that the loop has let go for down spell gen. A dial this drops never
// writes: its OnOpen arrives on a stale link and closes it.
func (bc *bconn) fence(gen uint64) {
	if bc.fenced.Load() == gen {
		return
	}
	bc.suspect()
	c := bc.c
	bc.cur, bc.c = nil, nil
	bc.greeting = false
	bc.state = stateIdle
	if c != nil {
		_ = c.Close()
	}
	bc.failAll(bc.srv.errDown)
	bc.busy.Store(false)
	bc.fenced.Store(gen)
}

// fencedAll reports whether every loop has dropped, for down spell gen,
// whatever connection or dial it had to s. A slot that never dialled (or
// whose loop never ran) holds nothing and needs no fence.
func (s *server) fencedAll(gen uint64) bool {
	for _, bc := range s.conns {
		if bc.busy.Load() && bc.fenced.Load() != gen {
			return false
		}
	}
	return true
}

// listsSuspect reports whether any address in listed is a suspect of s.
func (s *server) listsSuspect(listed [][]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range listed {
		if _, ok := s.suspects[string(a)]; ok {
			return true
		}
	}
	return false
}

// settled is the decision of step 2: the suspects have been absent from
// every "stats conns" answer since cleanSince, and that has held for at
// least settle. Times are on any one clock.
func settled(cleanSince, now time.Time, settle time.Duration) bool {
	return !cleanSince.IsZero() && now.Sub(cleanSince) >= settle
}

// makeSafe runs the returning protocol on nc, the probe connection that
// has just answered, for down spell gen. nil means s may be routed again.
func (p *Pool) makeSafe(s *server, nc net.Conn, r *bufio.Reader, gen uint64) error {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.ReturnTimeout)
	defer cancel()
	// Close (or the timeout) interrupts a read in flight at once.
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()
	poll := time.NewTicker(p.tick)
	defer poll.Stop()
	wait := func() error {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %v", ErrNotSafe, ctx.Err())
		case <-poll.C:
			return nil
		}
	}
	// 1. Every loop has dropped what it had open before the mark-down.
	for !s.fencedAll(gen) {
		if err := wait(); err != nil {
			return err
		}
	}
	// 2. The server lists none of the dropped connections that had
	// requests outstanding, in answers spanning at least one probe
	// interval.
	var cleanSince time.Time
	var buf []byte
	for {
		_ = nc.SetDeadline(time.Now().Add(p.cfg.RequestTimeout + p.cfg.DialTimeout))
		var err error
		buf, err = readStatsConns(nc, r, buf[:0])
		if err != nil {
			return err
		}
		listed, err := parseStatsConns(buf)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.returnChecks++
		s.mu.Unlock()
		now := time.Now()
		switch {
		case s.listsSuspect(listed):
			cleanSince = time.Time{}
		case cleanSince.IsZero():
			cleanSince = now
		}
		if settled(cleanSince, now, p.cfg.ProbeInterval) {
			break
		}
		if err := wait(); err != nil {
			return err
		}
	}
	// 3. Flush, when the pool's data may be stale, or the topology
	// asked for it (reentry.go).
	inc, forced := s.takeFlush()
	if p.cfg.FlushOnReturn || forced {
		_ = nc.SetDeadline(time.Now().Add(p.cfg.RequestTimeout + p.cfg.DialTimeout))
		if _, err := nc.Write(metacodec.AppendFlush(nil, 0)); err != nil {
			return err
		}
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if !bytes.Equal(line, []byte("OK\r\n")) {
			return fmt.Errorf("%w: flush_all got %q", ErrProtocol, line)
		}
		if forced {
			s.flushedFor(inc)
			p.noteFlushed(s.addr, inc)
		}
	}
	s.mu.Lock()
	clear(s.suspects) // all gone from the server
	s.mu.Unlock()
	return nil
}

// readStatsConns sends "stats conns" and appends the whole reply, through
// END, to dst.
func readStatsConns(nc net.Conn, r *bufio.Reader, dst []byte) ([]byte, error) {
	if _, err := nc.Write([]byte("stats conns\r\n")); err != nil {
		return dst, err
	}
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return dst, err
		}
		dst = append(dst, line...)
		if bytes.Equal(line, []byte("END\r\n")) {
			return dst, nil
		}
		if len(dst) > maxStatsConnsReply {
			return dst, fmt.Errorf("%w: stats conns reply over %d bytes", ErrProtocol, maxStatsConnsReply)
		}
	}
}

// parseStatsConns returns the peer address of every connection in a
// memcached "stats conns" reply (through END), in the form Go's
// net.Addr.String gives a TCP address ("127.0.0.1:5000", "[::1]:5000"):
// the transport prefix memcached puts before it is dropped. UDP and unix
// entries are left out; listening sockets are kept (their addresses are
// the server's, never one of ours). The slices alias reply.
func parseStatsConns(reply []byte) ([][]byte, error) {
	var out [][]byte
	rest := reply
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 1 || rest[i-1] != '\r' {
			return nil, fmt.Errorf("%w: stats conns: unterminated line", ErrProtocol)
		}
		line := rest[:i-1]
		rest = rest[i+1:]
		if bytes.Equal(line, []byte("END")) {
			if len(rest) != 0 {
				return nil, fmt.Errorf("%w: stats conns: bytes after END", ErrProtocol)
			}
			return out, nil
		}
		f := bytes.Fields(line)
		if len(f) != 3 || !bytes.Equal(f[0], []byte("STAT")) {
			return nil, fmt.Errorf("%w: stats conns: line %q", ErrProtocol, line)
		}
		id, field, ok := bytes.Cut(f[1], []byte(":"))
		if !ok || len(id) == 0 {
			return nil, fmt.Errorf("%w: stats conns: name %q", ErrProtocol, f[1])
		}
		if !bytes.Equal(field, []byte("addr")) {
			continue
		}
		for _, proto := range []string{"tcp:", "tcp6:"} {
			if a, ok := bytes.CutPrefix(f[2], []byte(proto)); ok && len(a) > 0 {
				out = append(out, a)
			}
		}
	}
	return nil, fmt.Errorf("%w: stats conns: no END", ErrProtocol)
}
