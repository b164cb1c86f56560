package memcached

import "errors"

// The reasons a backend fails an operation. A failed Op carries a
// *BackendError whose Err is, or wraps, one of them; test with errors.Is.
var (
	// ErrDown: the server was marked down and is being probed.
	ErrDown = errors.New("is down")
	// ErrUnreachable: connecting failed, or is being retried after a
	// failure (reconnect backoff).
	ErrUnreachable = errors.New("is unreachable")
	// ErrTimeout: no reply within Config.RequestTimeout. Every request on
	// the connection fails with it, since replies can no longer be paired.
	ErrTimeout = errors.New("timed out")
	// ErrConnLost: the connection closed with requests in flight.
	ErrConnLost = errors.New("closed the connection")
	// ErrProtocol: the server's reply could not be parsed or paired with
	// its request; the connection was reset.
	ErrProtocol = errors.New("broke the protocol")
)

// BackendError is the failure of a memcached server. The proxy answers it
// with SERVER_ERROR and its text, e.g. "backend 10.0.0.1:11211 is down".
type BackendError struct {
	Addr string
	Err  error
}

func (e *BackendError) Error() string { return "backend " + e.Addr + " " + e.Err.Error() }
func (e *BackendError) Unwrap() error { return e.Err }

// RequestError means a request cannot be expressed to memcached (for
// example a binary key too long for base64). It is the client's fault, not
// the backend's: health is not affected.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return "request not sendable to memcached: " + e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// Internal errors: the pool itself is not ready, or the Op is not valid
// for it.
var (
	ErrNotStarted = errors.New("memcached pool: not started (no event loops yet)")
	ErrClosed     = errors.New("memcached pool: closed")
	ErrBadLoop    = errors.New("memcached pool: operation issued on an unknown event loop")
)
