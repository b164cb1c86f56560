package admin

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"
)

// DefaultListen is where the admin server listens unless told otherwise:
// loopback, so that nothing outside the host can tune the proxy by default.
const DefaultListen = "127.0.0.1:11299"

// ErrExposed refuses an admin listener reachable from other hosts when no
// token protects it.
var ErrExposed = errors.New("admin: a non-loopback admin address needs a token (admin.token_file)")

// Config is the admin server's configuration. The zero value listens on
// DefaultListen without a token.
type Config struct {
	// Listen is host:port of the HTTP listener. Default DefaultListen. A
	// host that is not a loopback address (an empty host and 0.0.0.0 mean
	// every interface) is refused unless Token is set.
	Listen string
	// Token, when not empty, must be presented as "Authorization: Bearer
	// <Token>" on every /admin/v1 request. /healthz, /readyz and /metrics
	// stay open. It can be replaced while serving with Server.SetToken.
	Token string
	// AllowedHosts are the names, besides loopback ones, that a request's
	// Host header may carry while no token is set. Without a token the
	// listener is loopback, and a page in a browser on this machine could
	// still reach it under a name of the attacker's that resolves to
	// 127.0.0.1 (DNS rebinding); refusing foreign Host headers closes that
	// door. With a token they are not checked: a rebinding page cannot
	// present it. Names compare case-insensitively, without the port.
	AllowedHosts []string
	// TLS serves HTTPS with the certificate, key and CA of the memcached
	// listener (Deps.TLS): one set of files, reloaded together. With a CA
	// there, clients present certificates as memcached clients do.
	TLS bool
	// ShutdownTimeout bounds how long Stop waits for requests in progress
	// when its context has no deadline. Default 5s.
	ShutdownTimeout time.Duration
	// Logger receives one line per change made through the API. Default
	// slog.Default().
	Logger *slog.Logger
}

// ConfigError is a refused value of one Config field. (FieldError is a
// refused field of an API request.)
type ConfigError struct {
	Field string // the Config field's Go name, e.g. "Listen"
	Err   error
}

func (e *ConfigError) Error() string { return "admin: " + e.Field + ": " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *ConfigError) FieldName() string { return e.Field }

// exposedError refuses a listen address reachable from other hosts
// without a token; it is ErrExposed under errors.Is.
type exposedError struct{ listen string }

func (e exposedError) Error() string {
	return fmt.Sprintf("%q is reachable from other hosts: set admin.token_file, or listen on loopback", e.listen)
}
func (e exposedError) Is(target error) bool { return target == ErrExposed }

// Validate reports every field New would refuse in c (a zero field means
// its default), each a *ConfigError, joined when there are several.
func (c Config) Validate() error {
	var errs []error
	refuse := func(field string, err error) { errs = append(errs, &ConfigError{Field: field, Err: err}) }
	listen := c.Listen
	if listen == "" {
		listen = DefaultListen
	}
	if host, port, err := net.SplitHostPort(listen); err != nil {
		refuse("Listen", fmt.Errorf("%q: want host:port", listen))
	} else if port == "" {
		refuse("Listen", fmt.Errorf("%q: missing port", listen))
	} else if c.Token == "" && !IsLoopback(host) {
		refuse("Listen", exposedError{listen})
	}
	if c.ShutdownTimeout < 0 {
		refuse("ShutdownTimeout", fmt.Errorf("%v: must not be negative", c.ShutdownTimeout))
	}
	for _, h := range c.AllowedHosts {
		if t := strings.TrimSpace(h); t == "" || strings.ContainsAny(t, " /:@") && net.ParseIP(t) == nil {
			refuse("AllowedHosts", fmt.Errorf("%q: want a host name or address, without port", h))
		}
	}
	return errors.Join(errs...)
}

// validate checks c, then fills the defaults and puts AllowedHosts in the
// form requests are compared with (a copy: the caller's slice stays).
func (c *Config) validate() error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 5 * time.Second
	}
	hosts := make([]string, len(c.AllowedHosts))
	for i, h := range c.AllowedHosts {
		hosts[i] = strings.ToLower(strings.TrimSpace(h))
	}
	c.AllowedHosts = hosts
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// IsLoopback reports whether host (the host part of a listen address)
// accepts connections from this machine only. Names other than
// "localhost" are not resolved: they count as exposed, since what they
// resolve to can change.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
