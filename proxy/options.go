package proxy

import (
	"crypto/tls"
	"fmt"
	"log/slog"
)

// Option adjusts a Server beyond its Config.
type Option func(*options)

type options struct {
	statsFunc func(dst []byte, args [][]byte) []byte
	sampler   Sampler
	inspector Inspector
	// memLimiter answers cache_memlimit (WithMemLimiter); nil: refused.
	memLimiter MemLimiter
	link       string      // the region-link listen address, "" for none
	linkTLS    *tls.Config // mutual TLS on the link listener, nil for none

	// certRefresher answers refresh_certs (WithCertRefresher); nil: the
	// client listener's own reload.
	certRefresher CertRefresher
}

// WithStats adds lines to the stats command: f appends "STAT name value\r\n"
// lines for the given arguments (none for plain stats).
func WithStats(f func(dst []byte, args [][]byte) []byte) Option {
	return func(o *options) { o.statsFunc = f }
}

// gnetLogger routes gnet's own log lines into slog.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) Debugf(f string, a ...any) { g.l.Debug(fmt.Sprintf(f, a...), "component", "gnet") }
func (g gnetLogger) Infof(f string, a ...any)  { g.l.Debug(fmt.Sprintf(f, a...), "component", "gnet") }
func (g gnetLogger) Warnf(f string, a ...any)  { g.l.Warn(fmt.Sprintf(f, a...), "component", "gnet") }
func (g gnetLogger) Errorf(f string, a ...any) { g.l.Error(fmt.Sprintf(f, a...), "component", "gnet") }
func (g gnetLogger) Fatalf(f string, a ...any) { g.l.Error(fmt.Sprintf(f, a...), "component", "gnet") }
