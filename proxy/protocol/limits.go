package protocol

import "fmt"

// Limits bounds what one connection may make the parser buffer or accept.
// The zero value of a field means its default.
type Limits struct {
	// MaxItemSize is the largest item the proxy accepts, in memcached's -I
	// sense (default 1 MiB). As in memcached it bounds the whole item, not
	// just the data: a value is refused when
	//
	//	ItemHeaderSize + len(key) + 1 + (4 if flags != 0) + len(data) + 2 > MaxItemSize
	//
	// so that the proxy refuses exactly what a memcached started with the
	// same -I refuses. The refusal is "SERVER_ERROR object too large for
	// cache" and the data block is then swallowed without being buffered.
	MaxItemSize int

	// MaxLineLen is how much of a get/gets line the proxy looks at before
	// it serves the line (default 1 MiB). memcached lets a multi-get line
	// grow without bound while it waits for the newline. A line whose
	// newline comes within MaxLineLen bytes is checked whole, then served;
	// a longer one is served in pieces as it arrives, MaxLineLen bytes at
	// a time, so a client can never make the proxy hold more than
	// MaxLineLen bytes of one line (see parse_get.go). Other lines follow
	// memcached exactly: the connection closes once more than 2048 bytes
	// are buffered without a newline, or when the newline is further than
	// memcached's 16 KiB read buffer could ever hold.
	MaxLineLen int

	// DisableFlush makes flush_all answer "CLIENT_ERROR flush_all not
	// allowed", as memcached -F does.
	DisableFlush bool

	// Auth, when set, makes every connection authenticate before any other
	// command, as memcached -Y (text) and -S (binary SASL PLAIN) do; see
	// auth.go. nil: no authentication, as memcached without either.
	Auth Authenticator
}

const (
	// DefaultMaxItemSize is memcached's default -I.
	DefaultMaxItemSize = 1 << 20
	// DefaultMaxLineLen is the default window on a get/gets line: lines up
	// to it are checked whole (an over-long key anywhere answers memcached's
	// error alone); its size is that of the largest item.
	DefaultMaxLineLen = 1 << 20

	// ItemHeaderSize is the fixed per-item overhead memcached 1.6 on a
	// 64-bit host counts against -I: the item header (48 bytes) and the CAS
	// word (8 bytes).
	ItemHeaderSize = 56

	// KeyMaxLen is memcached's longest key.
	KeyMaxLen = 250

	// lineNoNewlineMax: with more bytes than this buffered and no newline,
	// memcached drops a connection whose line is not a get/gets.
	lineNoNewlineMax = 2048
	// lineMax: memcached reads a request line into a 16 KiB buffer, so a
	// longer non-get line can never be executed.
	lineMax = 16384
	// getLeadingSpaceMax: memcached only lets a long line grow if the get
	// starts within this many leading spaces.
	getLeadingSpaceMax = 100
	// minItemSize keeps MaxItemSize above the item header so a refusal
	// test can never underflow.
	minItemSize = 1024
	// maxItemSize is memcached's largest -I.
	maxItemSize = 1 << 30
)

// FieldError is a refused value of one Limits field.
type FieldError struct {
	Field string // the Limits field's Go name, e.g. "MaxItemSize"
	Err   error
}

func (e *FieldError) Error() string { return "protocol: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// filled returns l with zero fields replaced by their defaults.
func (l Limits) filled() Limits {
	if l.MaxItemSize == 0 {
		l.MaxItemSize = DefaultMaxItemSize
	}
	if l.MaxLineLen == 0 {
		l.MaxLineLen = DefaultMaxLineLen
	}
	return l
}

// Validate reports values that cannot work (zero fields mean their
// defaults), as a *FieldError. NewParser does not fail on them: it raises
// them to the minimum.
func (l Limits) Validate() error {
	l = l.filled()
	if l.MaxItemSize < minItemSize || l.MaxItemSize > maxItemSize {
		return &FieldError{Field: "MaxItemSize", Err: fmt.Errorf("%d is out of range: 1KiB to 1GiB", l.MaxItemSize)}
	}
	if l.MaxLineLen < lineNoNewlineMax {
		return &FieldError{Field: "MaxLineLen", Err: fmt.Errorf("%d is below memcached's %d", l.MaxLineLen, lineNoNewlineMax)}
	}
	return nil
}

// tooLarge is memcached's item size test. dataLen includes the trailing
// \r\n of the data block.
func (l *Limits) tooLarge(keyLen int, flags uint32, dataLen int64) bool {
	total := int64(ItemHeaderSize) + int64(keyLen) + 1 + dataLen
	if flags != 0 {
		total += 4
	}
	return total > int64(l.MaxItemSize)
}
