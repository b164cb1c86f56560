package tlsconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// Server runs the server side of the handshake on nc, on the calling
// goroutine, within timeout. On success nc is ready to be handed to the
// event loop (which then owns the socket) and the returned Conn processes
// its records there; on failure nc is closed. crypto/tls cannot resume a
// handshake that would block, which is why the handshake, unlike the
// records after it, runs off the loop.
func Server(nc net.Conn, cfg *tls.Config, timeout time.Duration) (*Conn, error) {
	t := &transport{raw: nc, local: nc.LocalAddr(), remot: nc.RemoteAddr()}
	return handshake(tls.Server(t, cfg), t, timeout)
}

// Client runs the client side of the handshake on nc, as Server does.
func Client(nc net.Conn, cfg *tls.Config, timeout time.Duration) (*Conn, error) {
	t := &transport{raw: nc, local: nc.LocalAddr(), remot: nc.RemoteAddr()}
	return handshake(tls.Client(t, cfg), t, timeout)
}

func handshake(tc *tls.Conn, t *transport, timeout time.Duration) (*Conn, error) {
	nc := t.raw
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	_ = nc.SetDeadline(time.Now().Add(timeout))
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	// From here on crypto/tls reads and writes the loop's buffers; the
	// socket belongs to whoever registers it with the loop.
	t.raw = nil
	return &Conn{tc: tc, t: t}, nil
}

// Handshake failure reasons, the label values of
// strata_tls_handshake_errors_total.
const (
	ReasonPlaintext     = "plaintext"       // the first bytes were not a TLS record: a plaintext client
	ReasonTruncated     = "truncated"       // the peer closed or reset mid-handshake
	ReasonTimeout       = "timeout"         // the handshake outlived its bound
	ReasonBadClientCert = "bad_client_cert" // no, or an unverifiable, client certificate
	ReasonBadServerCert = "bad_server_cert" // a backend's certificate failed verification
	ReasonOther         = "other"           // versions, ciphers, protocol errors
)

// Reasons lists every reason, in a fixed order for exporters.
var Reasons = []string{ReasonPlaintext, ReasonTruncated, ReasonTimeout, ReasonBadClientCert, ReasonBadServerCert, ReasonOther}

// Reason classifies a handshake error; server tells which side failed
// (a verification failure is the peer's certificate either way).
func Reason(err error, server bool) string {
	var rh tls.RecordHeaderError
	var ne net.Error
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	switch {
	case errors.As(err, &rh):
		return ReasonPlaintext
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return ReasonTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE):
		return ReasonTruncated
	case errors.As(err, &cv), errors.As(err, &ua), strings.Contains(err.Error(), "certificate"):
		if server {
			return ReasonBadClientCert
		}
		return ReasonBadServerCert
	}
	return ReasonOther
}
