package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"net"

	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/internal/tlsconn"
)

// TLS on client and region-link connections (internal/tlsconn): the
// acceptor hands each accepted socket to a goroutine that runs the
// handshake within Config.TLS.HandshakeTimeout, then registers the socket
// with the engine carrying the session (tlsMark). From OnOpen on, the
// connection's gnet.Conn is wrapped (tlsGnetConn): every callback first
// decrypts what arrived into a plaintext buffer, and the parser, the
// bounds and the reply queue run over that buffer exactly as over gnet's
// own; replies are sealed into records on their way to gnet. Everything
// after the handshake runs on the event loop, without a copy through
// another goroutine.
//
// Bounds: the plaintext buffer holds at most peekMax bytes plus one
// record, what the parser may need whole; the rest stays ciphertext in
// gnet's inbound buffer, counted by the paused connection's bound like a
// plaintext client's bytes. A handshake that does not finish within the
// timeout is closed: a half-open handshake costs a socket and a parked
// goroutine until then, never an event loop's time.
//
// Stalls (stall.go) count the kernel's unread bytes, which are ciphertext
// for a TLS connection: more than the plaintext they carry, so a write
// held through a stall is refused as it would be, and a few after it too.

// tlsMark is the gnet context of a TLS connection until OnOpen replaces
// it with the connection's state.
type tlsMark struct {
	t    *tlsconn.Conn
	link bool
}

// tlsIO moves a TLS connection's bytes between gnet and its session:
// ciphertext in through pump, plaintext out sealed through seal. Only the
// connection's event loop uses it.
type tlsIO struct {
	raw   gnet.Conn
	t     *tlsconn.Conn
	limit int // plaintext decrypted ahead of the reader: the server's peekMax
	// fresh: no callback yet. The handshake may have read records past
	// its end (a TLS 1.3 client's first request), which only a Decrypt
	// brings out of crypto/tls.
	fresh bool
}

// seal encrypts p and hands the records to gnet; a broken session closes
// the connection.
func (io *tlsIO) seal(p []byte) (int, error) {
	if err := io.t.Encrypt(p); err != nil {
		_ = io.raw.Close()
		return 0, err
	}
	return len(p), io.send()
}

// send hands the sealed records to gnet.
func (io *tlsIO) send() error {
	out := io.t.Out()
	if len(out) == 0 {
		return nil
	}
	_, err := io.raw.Write(out)
	io.t.Sent()
	return err
}

// pump decrypts the ciphertext gnet buffered, up to limit bytes of
// plaintext, and sends what crypto/tls answered by itself.
func (io *tlsIO) pump() {
	raw := io.raw.InboundBuffered()
	if raw > 0 && io.t.Buffered() < io.limit {
		buf, _ := io.raw.Peek(min(raw, io.limit+tlsRecordRoom))
		if k := io.t.Decrypt(buf, io.limit); k > 0 {
			_, _ = io.raw.Discard(k)
		}
	} else if (io.fresh || io.t.Held()) && io.t.Buffered() < io.limit {
		io.t.Decrypt(nil, io.limit)
	}
	io.fresh = false
	_ = io.send()
}

// more reports that the session holds ciphertext Decrypt left for later
// and the reader made room for it: the connection needs a callback even
// if no byte arrives.
func (io *tlsIO) more() bool { return io.t.Held() && io.t.Buffered() < io.limit }

// tlsRecordRoom is what pump lends Decrypt beyond its limit: one whole
// record with its header and tag, so a record straddling the limit is
// taken whole.
const tlsRecordRoom = 16<<10 + 512

// tlsGnetConn is a TLS client connection's gnet.Conn as conn sees it:
// Peek, Discard and InboundBuffered read the plaintext; Write seals. The
// other methods are gnet's.
type tlsGnetConn struct {
	gnet.Conn
	tlsIO
}

func (c *tlsGnetConn) InboundBuffered() int        { return c.t.Buffered() }
func (c *tlsGnetConn) Peek(n int) ([]byte, error)  { return c.t.Peek(n), nil }
func (c *tlsGnetConn) Discard(n int) (int, error)  { return c.t.Discard(n), nil }
func (c *tlsGnetConn) Write(p []byte) (int, error) { return c.seal(p) }

// tlsTraffic is OnTraffic of a TLS client connection.
func (cn *conn) tlsTraffic(w *tlsGnetConn) gnet.Action {
	w.pump()
	if cn.paused && w.raw.InboundBuffered()+w.t.Buffered() > cn.srv.cfg.maxInbound() {
		cn.closed = true // sending without reading, past any use
		return gnet.Close
	}
	a := cn.traffic()
	if a != gnet.None || w.t.Err() != nil {
		return gnet.Close // the peer's close_notify or a broken record
	}
	if !cn.paused && !cn.closed && cn.held == nil && w.more() {
		_ = w.Wake(nil) // crypto/tls or gnet hold more: come back for it
	}
	return a
}

// tlsOpen wraps a TLS connection's gnet.Conn in OnOpen and asks for a
// first callback: what the client sent with its handshake may already
// sit in the session, and no socket event will announce it.
func (s *Server) tlsOpen(c gnet.Conn, m tlsMark) gnet.Conn {
	w := &tlsGnetConn{Conn: c, tlsIO: tlsIO{raw: c, t: m.t, limit: s.peekMax, fresh: true}}
	_ = c.Wake(nil)
	return w
}

// acceptTLS handshakes nc on a goroutine the server owns and registers
// the connection with the engine; a failed handshake closes nc and is
// counted by the listener's store (a link listener's by linkTLS).
func (s *Server) acceptTLS(a *acceptor, eng gnet.Engine, nc net.Conn) {
	if !s.pending.add(nc) {
		_ = nc.Close()
		return
	}
	s.handshakes.Add(1)
	go func() {
		defer s.handshakes.Done()
		timeout := tlsHandshakeTimeout
		if a.store != nil {
			timeout = a.store.HandshakeTimeout()
		}
		t, err := tlsconn.Server(nc, a.tls, timeout)
		s.pending.remove(nc)
		if a.store != nil {
			a.store.Counted(err)
		} else if a.link {
			s.linkTLS.Count(err, true)
		}
		if err != nil {
			s.cfg.Logger.Debug("TLS handshake", "remote", nc.RemoteAddr().String(), "link", a.link, "err", err)
			return
		}
		if err := s.register(eng, nc, tlsMark{t: t, link: a.link}); err != nil && !errors.Is(err, errEngineGone) {
			s.cfg.Logger.Debug("TLS: register", "err", err)
		}
	}()
}

// stopTLS closes the sockets still handshaking and waits for their
// goroutines, within ctx.
func (s *Server) stopTLS(ctx context.Context) {
	s.pending.closeAll()
	done := make(chan struct{})
	go func() {
		s.handshakes.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// ReloadTLS reads the client listener's certificate, key and CA again:
// new handshakes use them, open connections keep their sessions. On error
// (a missing or bad file, a key that does not match) the material in
// force stays. Without TLS it does nothing.
func (s *Server) ReloadTLS() error {
	if s.tls == nil {
		return nil
	}
	return s.tls.Reload()
}

// TLSStats reads the client listener's handshake counters and
// certificate; ok is false without TLS.
func (s *Server) TLSStats() (st tlsconn.Stats, ok bool) {
	if s.tls == nil {
		return st, false
	}
	return s.tls.Stats(), true
}

// LinkTLSHandshakes reads the link listener's handshake counts; ok is
// false without WithLinkTLS.
func (s *Server) LinkTLSHandshakes() (t tlsconn.Tally, ok bool) {
	if s.opts.linkTLS == nil {
		return t, false
	}
	return s.linkTLS.Read(), true
}

// TLSConfig is what the client listener handshakes with, nil without
// TLS: another listener given it (the admin API) presents the same
// certificate and follows ReloadTLS.
func (s *Server) TLSConfig() *tls.Config { return s.serverTLS() }

// serverTLS is the acceptor configuration of the client listener: the
// store's, so each handshake reads the material in force.
func (s *Server) serverTLS() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.ServerConfig()
}

// PlainAddr is the bound address of the plaintext listener beside a TLS
// one (Config.ListenPlain) once started, the configured one before.
func (s *Server) PlainAddr() string {
	s.mu.Lock()
	a := s.pacc
	s.mu.Unlock()
	if a == nil {
		return s.cfg.ListenPlain
	}
	return a.ln.Addr().String()
}
