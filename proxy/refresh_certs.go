package proxy

import (
	"errors"
	"strings"

	"github.com/strata-cache/strata/internal/tlsconn"
)

// memcached's refresh_certs: the client listener's certificate, key and
// CA are read again, as SIGHUP reads them, and the command answers OK or
// says which file failed in memcached's words. New handshakes use the new
// material; open connections keep their sessions. A refused file keeps
// the material in force whole (memcached 1.6.18 may keep half of it).
//
// Who may send it: with [auth] on, only an authenticated connection (the
// parser refuses every command before authentication); never a region
// link, whose peer is another strata, not an operator.
//
// The files are read on a goroutine of their own, never on the event
// loop: the slot is held (pending) until the answer is handed back to the
// connection's loop, so pipelined requests behind it keep their order.
// The goroutine ends when the files are read; a server stopping meanwhile
// drops the answer with the connection.

// CertRefresher re-reads certificate files for refresh_certs. It is
// called off the event loop and may block on file reads; a refusal should
// be a *tlsconn.FileError so the reply can name the file.
type CertRefresher interface {
	RefreshCerts() error
}

// WithCertRefresher makes refresh_certs call r, usually the same reload
// SIGHUP runs (the listener's certificate and the pools'). Without one,
// refresh_certs reloads the client listener's certificate (ReloadTLS).
func WithCertRefresher(r CertRefresher) Option {
	return func(o *options) { o.certRefresher = r }
}

var (
	// rNoTLS is memcached's answer when it serves no TLS, sent even with
	// noreply.
	rNoTLS = []byte("Error TLS not enabled\r\n")
	// rError: a region link has no administration commands.
	rError = []byte("ERROR\r\n")
)

// refreshCerts answers refresh_certs into s.
func (cn *conn) refreshCerts(s *slot) {
	srv := cn.srv
	switch {
	case cn.link:
		s.fixed = append(s.fixed, rError...)
		return
	case srv.tls == nil:
		s.fixed = append(s.fixed, rNoTLS...)
		return
	}
	s.pending++
	loop, noreply, remote := cn.loop.idx, s.cmd.NoReply, addrString(cn.c.RemoteAddr())
	go func() {
		err := srv.refreshCertFiles()
		if err != nil {
			srv.cfg.Logger.Error("refresh_certs: TLS files refused; the certificate in force stays", "remote", remote, "err", err)
		} else {
			srv.cfg.Logger.Info("refresh_certs: certificate reloaded", "remote", remote, "serial", srv.tls.Leaf().SerialNumber.Text(16))
		}
		reply := refreshCertsReply(err, noreply)
		srv.RunOnLoop(loop, func() {
			s.fixed = append(s.fixed, reply...)
			cn.releaseReply(s)
		})
	}()
}

// refreshCertFiles is the reload refresh_certs runs.
func (srv *Server) refreshCertFiles() error {
	if r := srv.opts.certRefresher; r != nil {
		return r.RefreshCerts()
	}
	return srv.ReloadTLS()
}

// refreshCertsReply is memcached's answer to refresh_certs for err: OK
// (nothing with noreply), or an error line naming the file, sent even
// with noreply as memcached does.
func refreshCertsReply(err error, noreply bool) []byte {
	if err == nil {
		if noreply {
			return nil
		}
		return replyOK
	}
	var fe *tlsconn.FileError
	var line string
	switch {
	case !errors.As(err, &fe):
		line = "Error validating the certificate: " + err.Error()
	case fe.File == tlsconn.FileCert:
		line = "Error loading the certificate chain: " + fe.Path + " : " + fe.Err.Error()
	case fe.File == tlsconn.FileKey:
		line = "Error loading the key: " + fe.Path + " : " + fe.Err.Error()
	default:
		line = "Error loading the CA certificate: " + fe.Path + " : " + fe.Err.Error()
	}
	// One line, whatever a path or an error holds.
	line = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, line)
	return []byte(line + "\r\n")
}
