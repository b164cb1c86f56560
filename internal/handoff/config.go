package handoff

import (
	"fmt"
	"path/filepath"
)

// Config is the handoff's configuration. The zero value disables it.
type Config struct {
	// Socket is the path of the Unix socket a successor finds this
	// process on ([server] handoff_socket); "" for no handoff. It must be
	// absolute, so that a successor started from another directory finds
	// it, and short enough for a socket address (sun_path).
	Socket string
}

// maxSocketPath is the longest path a Unix socket address holds on Linux
// (108 bytes of sun_path, one for the terminating NUL).
const maxSocketPath = 107

// Enabled reports whether a socket is configured.
func (c Config) Enabled() bool { return c.Socket != "" }

// Validate refuses a relative or over-long socket path.
func (c Config) Validate() error {
	switch {
	case c.Socket == "":
		return nil
	case !filepath.IsAbs(c.Socket):
		return &FieldError{Field: "Socket", Err: fmt.Errorf("%q: want an absolute path", c.Socket)}
	case len(c.Socket) > maxSocketPath:
		return &FieldError{Field: "Socket", Err: fmt.Errorf("%d bytes: a Unix socket path holds at most %d", len(c.Socket), maxSocketPath)}
	}
	return nil
}

// FieldError is a refused value of one Config field.
type FieldError struct {
	Field string // the Config field's Go name, "Socket"
	Err   error
}

func (e *FieldError) Error() string { return "handoff: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// FieldName returns Field: a configuration reader maps it onto its own key.
func (e *FieldError) FieldName() string { return e.Field }
