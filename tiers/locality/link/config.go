package link

import (
	"crypto/tls"
	"fmt"
	"time"
)

// Defaults of Config.
const (
	DefaultTimeout    = time.Second
	DefaultMaxPending = 4096
	DefaultMaxValue   = 1 << 20
	// DefaultClockSkew is the disagreement between regions' clocks a
	// write's deadline allows for (ClockSkew): ten times what NTP keeps
	// between well-run machines.
	DefaultClockSkew = 100 * time.Millisecond
	// MaxTimeout bounds Timeout: a forward that waits longer holds a
	// client's reply slot for longer than any client waits.
	MaxTimeout = 5 * time.Minute
)

// Config is the region-link client's configuration.
type Config struct {
	// Peers maps each other region's name to its link address (host:port).
	Peers map[string]string
	// Timeout bounds a forwarded request, from when it is queued to its
	// reply (forward_timeout): WAN-sized. A connection whose oldest
	// request waits longer is closed and everything on it fails. It also
	// bounds a dial. Default 1s.
	Timeout time.Duration
	// MaxPending bounds the requests queued on one connection (one per
	// peer per event loop), written or not; past it a request fails at
	// once, as if the peer were unreachable. Default 4096.
	MaxPending int
	// MaxValue is the largest value a reply may carry (the peer's item
	// size limit). Default 1 MiB.
	MaxValue int
	// TLS, when set, makes every link connection a TLS one: for mutual
	// TLS it holds this strata's client certificate and the CA the peers'
	// certificates must chain to (RootCAs). ServerName defaults to each
	// peer's host. nil: plain connections.
	TLS *tls.Config
	// ClockSkew bounds how far a peer's clock may be behind this one's.
	// A forwarded write carries the deadline at which this client answers
	// it as failed (its Timeout after it is queued), less ClockSkew; the
	// receiver refuses it past that on its own clock (linkproto), so a
	// write held by a network or a paused machine never lands after its
	// client was told it failed. Default 100ms; below Timeout.
	ClockSkew time.Duration
	// Now is the wall clock deadlines are read from. Default time.Now.
	Now func() time.Time
}

func (c *Config) validate() error {
	for region, addr := range c.Peers {
		if region == "" {
			return fmt.Errorf("link: a peer with no region name (address %q)", addr)
		}
		if err := CheckAddress(addr); err != nil {
			return fmt.Errorf("link: peer %s: %w", region, err)
		}
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Timeout < time.Millisecond || c.Timeout > MaxTimeout {
		return fmt.Errorf("link: timeout %v: must be 1ms to %v", c.Timeout, MaxTimeout)
	}
	if c.ClockSkew == 0 {
		c.ClockSkew = min(DefaultClockSkew, c.Timeout/2)
	}
	if c.ClockSkew < 0 || c.ClockSkew >= c.Timeout {
		return fmt.Errorf("link: clock skew %v: must be below the timeout %v", c.ClockSkew, c.Timeout)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxPending == 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.MaxPending < 1 || c.MaxPending > 1<<20 {
		return fmt.Errorf("link: max pending %d: must be 1 to %d", c.MaxPending, 1<<20)
	}
	if c.MaxValue == 0 {
		c.MaxValue = DefaultMaxValue
	}
	if c.MaxValue < 1 || c.MaxValue > 1<<30 {
		return fmt.Errorf("link: max value %d: must be 1 to %d", c.MaxValue, 1<<30)
	}
	return nil
}
