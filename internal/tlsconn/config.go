package tlsconn

import (
	"fmt"
	"time"
)

// Client-certificate policies of Config.Verify, memcached's
// ssl_verify_mode in words.
const (
	VerifyNone    = "none"    // no client certificate is asked for
	VerifyRequest = "request" // asked for; verified against CA when given
	VerifyRequire = "require" // required and verified against CA
)

// Defaults and bounds of Config.HandshakeTimeout. The timeout is what
// bounds a half-open handshake's socket and goroutine, so it stays short.
const (
	DefaultHandshakeTimeout = 10 * time.Second
	MinHandshakeTimeout     = 10 * time.Millisecond
	MaxHandshakeTimeout     = 5 * time.Minute
)

// Config is one side's TLS material: PEM files read at start and again
// on Reload. The zero value is TLS off.
type Config struct {
	// Cert and Key are the certificate chain (leaf first) and its private
	// key. Both or neither.
	Cert, Key string
	// CA is a PEM bundle: on a listener, the authorities client
	// certificates must chain to; on a dialler, the ones a server's must
	// (empty: the system's roots).
	CA string
	// Verify is the client-certificate policy of a listener: VerifyNone,
	// VerifyRequest or VerifyRequire. Default: VerifyRequire when CA is
	// set, VerifyNone otherwise.
	Verify string
	// HandshakeTimeout bounds a handshake. Default 10s.
	HandshakeTimeout time.Duration
}

// FieldError is a refused value of one Config field.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "Verify"
	Err   error
}

func (e *FieldError) Error() string { return "tls: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Enabled reports whether the Config asks for TLS on a listener (a
// certificate to present).
func (c *Config) Enabled() bool { return c.Cert != "" || c.Key != "" }

// SetDefaults fills Verify and HandshakeTimeout when zero.
func (c *Config) SetDefaults() {
	if c.Verify == "" {
		c.Verify = VerifyNone
		if c.CA != "" {
			c.Verify = VerifyRequire
		}
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
}

// Validate checks a listener's Config after SetDefaults; the files
// themselves are judged when read (NewStore).
func (c *Config) Validate() error {
	if !c.Enabled() {
		if c.CA != "" {
			return fieldErr("CA", "a CA without a certificate and key: set cert and key to serve TLS")
		}
		return nil
	}
	if c.Cert == "" || c.Key == "" {
		return fieldErr("Cert", "cert and key go together")
	}
	switch c.Verify {
	case "", VerifyNone: // "": the default SetDefaults derives from CA
	case VerifyRequest, VerifyRequire:
		if c.CA == "" {
			return fieldErr("Verify", "%q verifies client certificates: it needs ca", c.Verify)
		}
	default:
		return fieldErr("Verify", "%q: want %q, %q or %q", c.Verify, VerifyNone, VerifyRequest, VerifyRequire)
	}
	if c.HandshakeTimeout < MinHandshakeTimeout || c.HandshakeTimeout > MaxHandshakeTimeout {
		return fieldErr("HandshakeTimeout", "%v is out of range: %v to %v", c.HandshakeTimeout, MinHandshakeTimeout, MaxHandshakeTimeout)
	}
	return nil
}
