package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/proxy/auth"
	"github.com/strata-cache/strata/proxy/protocol"
)

// Bounds of Config fields beyond their obvious minimum.
const (
	// MaxLoops bounds Config.Loops: more event loops than this cannot be
	// busy on any host we run on, and each costs memory per connection.
	MaxLoops = 1024
	// MaxInflightLimit bounds Config.MaxInflight.
	MaxInflightLimit = 1 << 20
	// MinOutboundBytes is the least Config.MaxOutboundBytes: one large
	// reply must fit.
	MinOutboundBytes = 64 << 10
)

// Defaults of Config.
const (
	DefaultListen           = "127.0.0.1:11211"
	DefaultMaxInflight      = 1024
	DefaultMaxOutboundBytes = 4 << 20
)

// FieldError is a refused value of one Config field.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "MaxInflight", "Limits.MaxItemSize"
	Err   error
}

func (e *FieldError) Error() string { return "proxy: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// DefaultConfig returns the documented defaults (Loops 0: one per CPU).
func DefaultConfig() Config {
	c := Config{MergeLoops: true}
	c.setDefaults()
	c.Loops, c.Logger = 0, nil
	return c
}

// setDefaults fills the zero fields but Loops with their defaults.
func (c *Config) setDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Limits.MaxItemSize == 0 {
		c.Limits.MaxItemSize = protocol.DefaultMaxItemSize
	}
	if c.MaxInflight == 0 {
		c.MaxInflight = DefaultMaxInflight
	}
	if c.MaxOutboundBytes == 0 {
		c.MaxOutboundBytes = DefaultMaxOutboundBytes
	}
	if c.Version == "" {
		c.Version = "dev"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.TLS.HandshakeTimeout == 0 {
		c.TLS.HandshakeTimeout = tlsconn.DefaultHandshakeTimeout
	}
}

// Validate reports every field of c, as it stands, that New would refuse:
// a zero is refused where the field has a default (New fills the
// defaults of zero fields before it validates; Validate does not, so that
// a configuration file's explicit 0 is refused, not taken for "default").
// Loops 0 is a value: one loop per CPU. Each refused field is a
// *FieldError, joined with errors.Join when there are several.
func (c Config) Validate() error {
	var errs []error
	refuse := func(field, format string, args ...any) { errs = append(errs, fieldErr(field, format, args...)) }
	if _, port, err := net.SplitHostPort(c.Listen); err != nil {
		refuse("Listen", "%q: want host:port", c.Listen)
	} else if port == "" {
		refuse("Listen", "%q: missing port", c.Listen)
	}
	if c.Loops < 0 || c.Loops > MaxLoops {
		refuse("Loops", "%d is out of range: 0 (one per CPU) to %d", c.Loops, MaxLoops)
	}
	var lfe *protocol.FieldError
	if err := c.Limits.Validate(); errors.As(err, &lfe) {
		errs = append(errs, &FieldError{Field: "Limits." + lfe.Field, Err: lfe.Err})
	} else if err != nil {
		errs = append(errs, &FieldError{Field: "Limits", Err: err})
	}
	if c.MaxInflight < 1 || c.MaxInflight > MaxInflightLimit {
		refuse("MaxInflight", "%d is out of range: 1 to %d", c.MaxInflight, MaxInflightLimit)
	}
	var afe *auth.FieldError
	if err := c.Auth.Validate(); errors.As(err, &afe) {
		errs = append(errs, &FieldError{Field: "Auth." + afe.Field, Err: afe.Err})
	} else if err != nil {
		errs = append(errs, &FieldError{Field: "Auth", Err: err})
	}
	if c.MaxOutboundBytes < MinOutboundBytes {
		refuse("MaxOutboundBytes", "%d is too small: at least 64KiB", c.MaxOutboundBytes)
	}
	var tfe *tlsconn.FieldError
	if err := c.TLS.Validate(); errors.As(err, &tfe) {
		errs = append(errs, &FieldError{Field: "TLS." + tfe.Field, Err: tfe.Err})
	}
	if c.ListenPlain != "" {
		if _, _, err := net.SplitHostPort(c.ListenPlain); err != nil {
			refuse("ListenPlain", "%q: want host:port", c.ListenPlain)
		} else if !c.TLS.Enabled() {
			refuse("ListenPlain", "a second plaintext listener is for a TLS one: set the TLS certificate and key, or use Listen")
		}
	}
	return errors.Join(errs...)
}
