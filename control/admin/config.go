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
	// ShutdownTimeout bounds how long Stop waits for requests in progress
	// when its context has no deadline. Default 5s.
	ShutdownTimeout time.Duration
	// Logger receives one line per change made through the API. Default
	// slog.Default().
	Logger *slog.Logger
}

func (c *Config) validate() error {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("admin: listen address %q: %w", c.Listen, err)
	}
	if c.Token == "" && !IsLoopback(host) {
		return fmt.Errorf("%w: %q", ErrExposed, c.Listen)
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = 5 * time.Second
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("admin: shutdown timeout %v: must not be negative", c.ShutdownTimeout)
	}
	for i, h := range c.AllowedHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" || strings.ContainsAny(h, " /:@") && net.ParseIP(h) == nil {
			return fmt.Errorf("admin: allowed host %q: want a host name or address without port", c.AllowedHosts[i])
		}
		c.AllowedHosts[i] = h
	}
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
