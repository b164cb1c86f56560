package proxy

import (
	"sync"
	"time"

	"github.com/strata-cache/strata/proxy/auth"
	"github.com/strata-cache/strata/proxy/protocol"
)

// Authentication (Config.Auth). The parser checks the credentials and
// refuses everything else until they pass (protocol/auth.go); the proxy
// owns what lies around it: the users file and its reload, the failure
// log, and slowing a client that keeps failing. Region links never
// authenticate this way: their mTLS already did.

// The parser consumes the users as its Authenticator.
var _ protocol.Authenticator = (*auth.Users)(nil)

// ReloadAuth re-reads the users file (on SIGHUP). Without Config.Auth it
// does nothing. On an error the accounts in force stay.
func (s *Server) ReloadAuth() error {
	if s.auth == nil {
		return nil
	}
	return s.auth.Reload()
}

// authAttempt follows an authentication attempt: a failure is logged with
// the user it named and never the password, and past auth.Config's
// SlowAfter failures on the connection its reply is held for Delay, so a
// client guessing passwords gets one answer per delay, and none of its
// later requests overtake it.
func (cn *conn) authAttempt(s *slot) {
	if !s.cmd.AuthFailed() {
		return
	}
	cn.authFails++
	user := ""
	if len(s.cmd.Args) > 0 {
		user = string(s.cmd.Args[0])
	}
	d := cn.srv.auth.Config().Delay(int(cn.authFails))
	if ok, suppressed := cn.srv.authLog.allow(time.Now()); ok {
		cn.srv.cfg.Logger.Warn("auth: attempt failed", "user", user, "remote", addrString(cn.c.RemoteAddr()),
			"failures", cn.authFails, "delay", d, "not_logged_before", suppressed)
	}
	if d > 0 {
		cn.holdReply(s, d)
	}
}

// holdReply keeps s from being ready for d. The timer's goroutine only
// hands the release to the connection's event loop.
func (cn *conn) holdReply(s *slot, d time.Duration) {
	s.pending++
	loop := cn.loop.idx
	time.AfterFunc(d, func() {
		cn.srv.RunOnLoop(loop, func() { cn.releaseReply(s) })
	})
}

// releaseReply ends a hold, on the connection's loop. A connection closed
// meanwhile has nothing left to write.
func (cn *conn) releaseReply(s *slot) {
	s.pending--
	if s.pending > 0 || cn.closed || cn.dirty {
		return
	}
	cn.dirty = true
	cn.loop.dirty = append(cn.loop.dirty, cn)
}

// authLogPerSecond bounds the failure log: many clients guessing at once
// would otherwise write a line per guess. What is not logged is counted
// (auth_errors) and the next line says how many went unlogged.
const authLogPerSecond = 10

// logLimiter lets through at most authLogPerSecond calls per wall-clock
// second and counts the others.
type logLimiter struct {
	mu         sync.Mutex
	second     int64 // the Unix second of the window
	n          int   // lines let through in it
	suppressed int   // calls refused since the last line let through
}

// allow reports whether a line may be written at now, and how many were
// refused before it.
func (l *logLimiter) allow(now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sec := now.Unix(); sec != l.second {
		l.second, l.n = sec, 0
	}
	if l.n >= authLogPerSecond {
		l.suppressed++
		return false, 0
	}
	l.n++
	s := l.suppressed
	l.suppressed = 0
	return true, s
}
