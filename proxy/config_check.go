package proxy

import "fmt"

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

// FieldError is a refused value of one Config field.
type FieldError struct {
	Field string // the Config field's Go name, e.g. "MaxInflight"
	Err   error
}

func (e *FieldError) Error() string { return "proxy: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Check reports what New would refuse in c (the first refused field),
// without building a server; a configuration checker uses it. A refused
// field is a *FieldError.
func (c Config) Check() error { return c.validate() }
