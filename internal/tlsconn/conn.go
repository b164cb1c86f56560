package tlsconn

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"
)

// ErrWouldBlock is what the transport answers crypto/tls when the event
// loop has lent it no more ciphertext. It is a temporary net.Error, which
// crypto/tls does not record as the connection's failure: the partial
// record stays buffered and the next Decrypt resumes it.
var ErrWouldBlock error = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "tlsconn: no ciphertext lent" }
func (wouldBlock) Timeout() bool   { return true }
func (wouldBlock) Temporary() bool { return true }

// transport is the net.Conn crypto/tls runs over. While the handshake
// runs (raw != nil) it is the socket itself, used by the handshaking
// goroutine; afterwards it is two buffers the event loop fills and drains.
type transport struct {
	raw          net.Conn // the socket during the handshake; nil on the loop
	local, remot net.Addr
	in           []byte // ciphertext lent by the loop for one Decrypt call
	taken        int    // bytes of in handed to crypto/tls
	open         bool   // Read may take from in (false once plaintext is at its limit)
	out          []byte // ciphertext produced, waiting for the loop to send
}

func (t *transport) Read(p []byte) (int, error) {
	if t.raw != nil {
		return t.raw.Read(p)
	}
	if !t.open || len(t.in) == 0 {
		return 0, ErrWouldBlock
	}
	n := copy(p, t.in)
	t.in = t.in[n:]
	t.taken += n
	return n, nil
}

func (t *transport) Write(p []byte) (int, error) {
	if t.raw != nil {
		return t.raw.Write(p)
	}
	t.out = append(t.out, p...)
	return len(p), nil
}

func (t *transport) Close() error {
	if t.raw != nil {
		return t.raw.Close()
	}
	return nil // the event loop owns the socket
}

func (t *transport) LocalAddr() net.Addr  { return t.local }
func (t *transport) RemoteAddr() net.Addr { return t.remot }

func (t *transport) SetDeadline(d time.Time) error {
	if t.raw != nil {
		return t.raw.SetDeadline(d)
	}
	return nil
}

func (t *transport) SetReadDeadline(d time.Time) error {
	if t.raw != nil {
		return t.raw.SetReadDeadline(d)
	}
	return nil
}

func (t *transport) SetWriteDeadline(d time.Time) error {
	if t.raw != nil {
		return t.raw.SetWriteDeadline(d)
	}
	return nil
}

// Conn is one TLS session whose records are processed on an event loop:
// the loop lends it the ciphertext it read (Decrypt), reads the plaintext
// (Peek, Discard), hands it replies (Encrypt) and sends the ciphertext
// they became (Out). It is made by Server or Client once the handshake
// completed. Every method must be called from the loop that owns the
// socket; none blocks.
type Conn struct {
	tc    *tls.Conn
	t     *transport
	plain []byte // decrypted, not yet discarded: plain[head:]
	head  int
	// held: Decrypt stopped at its limit, so crypto/tls or the lent
	// ciphertext may hold more; the loop must call Decrypt again once the
	// plaintext drained.
	held bool
	err  error // the session ended (close_notify: io.EOF) or failed
}

// readChunk is the room Decrypt offers crypto/tls per Read: one whole
// record (16 KiB of plaintext), so a record is copied out in one call.
const readChunk = 16 << 10

// Decrypt hands crypto/tls the ciphertext src (which it copies what it
// takes of) and appends the plaintext to the buffer Peek reads, until
// that holds limit bytes or src and crypto/tls are exhausted. It returns
// how many bytes of src were taken: the caller discards exactly those
// from its inbound buffer. The plaintext may overshoot limit by one record.
// After an error (Err) nothing more is decrypted.
func (c *Conn) Decrypt(src []byte, limit int) int {
	if c.err != nil {
		return 0
	}
	c.t.in, c.t.taken = src, 0
	c.held = false
	for {
		if len(c.plain)-c.head >= limit {
			c.held = true
			break
		}
		c.compact()
		if cap(c.plain)-len(c.plain) < readChunk {
			grown := make([]byte, len(c.plain), len(c.plain)+readChunk)
			copy(grown, c.plain)
			c.plain = grown
		}
		c.t.open = true
		n, err := c.tc.Read(c.plain[len(c.plain):cap(c.plain)])
		c.plain = c.plain[:len(c.plain)+n]
		if err != nil {
			if !errors.Is(err, ErrWouldBlock) {
				c.err = err
			}
			break
		}
	}
	c.t.open = false
	n := c.t.taken
	c.t.in, c.t.taken = nil, 0
	return n
}

// compact moves the unread plaintext to the buffer's start once at least
// half of it was discarded, and lets a large idle buffer go.
func (c *Conn) compact() {
	switch {
	case c.head == len(c.plain):
		if cap(c.plain) > 4*readChunk {
			c.plain = nil
		} else {
			c.plain = c.plain[:0]
		}
		c.head = 0
	case c.head > 0 && c.head >= len(c.plain)/2:
		c.plain = c.plain[:copy(c.plain, c.plain[c.head:])]
		c.head = 0
	}
}

// Held reports that the last Decrypt stopped at its limit: more
// plaintext may follow without new ciphertext.
func (c *Conn) Held() bool { return c.held }

// Buffered is the plaintext decrypted and not yet discarded.
func (c *Conn) Buffered() int { return len(c.plain) - c.head }

// Peek returns the first n bytes of plaintext (all of it for n <= 0 or
// more than is buffered). The slice is valid until the next Decrypt or
// Discard.
func (c *Conn) Peek(n int) []byte {
	p := c.plain[c.head:]
	if n > 0 && n < len(p) {
		p = p[:n]
	}
	return p
}

// Discard drops the first n bytes of plaintext (all for n <= 0, as
// gnet's Discard).
func (c *Conn) Discard(n int) int {
	if b := c.Buffered(); n <= 0 || n > b {
		n = b
	}
	c.head += n
	if c.head == len(c.plain) {
		c.compact()
	}
	return n
}

// Encrypt seals p into records appended to Out. It fails only once the
// session failed.
func (c *Conn) Encrypt(p []byte) error {
	_, err := c.tc.Write(p)
	return err
}

// Out is the ciphertext waiting to be sent: the records Encrypt sealed
// and whatever crypto/tls answered by itself (alerts, key updates). The
// caller sends it and then calls Sent; the slice is valid until then.
func (c *Conn) Out() []byte { return c.t.out }

// Sent empties Out.
func (c *Conn) Sent() {
	if cap(c.t.out) > 4*readChunk {
		c.t.out = nil
	} else {
		c.t.out = c.t.out[:0]
	}
}

// Err is why the session ended: io.EOF after the peer's close_notify,
// a record or alert error otherwise; nil while it serves.
func (c *Conn) Err() error { return c.err }

// State is the negotiated session (version, cipher, peer certificates,
// resumption).
func (c *Conn) State() tls.ConnectionState { return c.tc.ConnectionState() }

// Closed reports whether the session ended cleanly (the peer sent
// close_notify).
func (c *Conn) Closed() bool { return errors.Is(c.err, io.EOF) }
