package auth

import (
	"errors"
	"fmt"
	"time"
)

// Config is the [auth] section. The zero value requires no authentication.
type Config struct {
	// UsersFile is a file in memcached's -Y format: one "user:password" a
	// line (the password is everything after the first colon), blank
	// lines ignored. Empty: clients need not authenticate.
	UsersFile string
	// SlowAfter is how many failed attempts one connection may make before
	// the reply to each further failure is delayed. Default 3.
	SlowAfter int
	// MaxDelay caps that delay, which starts at 100ms and doubles with
	// every further failure. Default 5s.
	MaxDelay time.Duration
}

const (
	defaultSlowAfter = 3
	defaultMaxDelay  = 5 * time.Second
	firstDelay       = 100 * time.Millisecond
	maxMaxDelay      = time.Minute
)

// DefaultConfig is the configuration with every default filled in; it
// requires no authentication.
func DefaultConfig() Config {
	return Config{SlowAfter: defaultSlowAfter, MaxDelay: defaultMaxDelay}
}

// Enabled reports whether clients must authenticate.
func (c Config) Enabled() bool { return c.UsersFile != "" }

// filled returns c with zero fields replaced by their defaults.
func (c Config) filled() Config {
	if c.SlowAfter == 0 {
		c.SlowAfter = defaultSlowAfter
	}
	if c.MaxDelay == 0 {
		c.MaxDelay = defaultMaxDelay
	}
	return c
}

// FieldError is a refused value of one Config field.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "MaxDelay"
	Err   error
}

func (e *FieldError) Error() string { return "auth: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate reports the first value New would refuse, as a *FieldError.
// Zero fields mean their defaults. The users file itself is read by New.
func (c Config) Validate() error {
	c = c.filled()
	if c.SlowAfter < 0 {
		return &FieldError{Field: "SlowAfter", Err: fmt.Errorf("%d is negative", c.SlowAfter)}
	}
	if c.MaxDelay < 0 || c.MaxDelay > maxMaxDelay {
		return &FieldError{Field: "MaxDelay", Err: fmt.Errorf("%v is out of range: 0 to %v", c.MaxDelay, maxMaxDelay)}
	}
	return nil
}

// Delay is how long to hold the reply to a connection's fails-th failed
// attempt (counting from 1): nothing up to SlowAfter, then 100ms doubling
// with each failure, capped at MaxDelay.
func (c Config) Delay(fails int) time.Duration {
	c = c.filled()
	over := fails - c.SlowAfter
	if over <= 0 {
		return 0
	}
	d := firstDelay
	for i := 1; i < over && d < c.MaxDelay; i++ {
		d *= 2
	}
	return min(d, c.MaxDelay)
}

// errNoFile is New's refusal of a Config that requires nothing.
var errNoFile = errors.New("auth: no users file configured")
