package driver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/strata-cache/strata/bench/workload"
)

// Config describes one load run against one memcached endpoint.
type Config struct {
	// Target is host:port of any server speaking the memcached text protocol.
	Target string
	// Workload supplies the requests. Connection i draws from stream
	// Stream+i for cluster i mod Clusters.
	Workload *workload.Workload
	Stream   uint64

	// Conns is the number of TCP connections (default 1).
	Conns int
	// Pipeline is the depth: in closed loop, each connection writes Pipeline
	// requests and then reads their Pipeline replies; in open loop, the most
	// requests written together when several are due (default 1).
	Pipeline int
	// Rate, when positive, selects open loop: requests are sent on a fixed
	// schedule totalling Rate per second over all connections, and latency
	// is measured from each request's scheduled time, so a stalled server is
	// charged for the requests it delayed (no coordinated omission).
	Rate float64

	// Duration bounds the run; Requests, when positive, bounds the number of
	// requests sent (exactly that many are sent unless Duration ends the run
	// first). With Requests alone, Duration defaults to MaxDuration.
	Duration time.Duration
	Requests int64

	// DialTimeout (default 2 s) bounds each connect; IOTimeout (default 5 s)
	// bounds how long a connection may wait for a reply.
	DialTimeout time.Duration
	IOTimeout   time.Duration
	// TLS, when set, makes every connection a TLS client of Target
	// (memtier's --tls); the handshake counts in DialTimeout.
	TLS *tls.Config
	// MaxInFlight caps unanswered requests per connection in open loop
	// (default 4096). Past it the sender waits; the wait counts in latency.
	MaxInFlight int

	// Prefill sets every key of the workload once before measuring, when the
	// profile asks for it (workload.Profile.Prefill). PrefillLimit refuses
	// key spaces larger than it (default 10 million keys).
	PrefillLimit uint64

	// Started, if set, is called once the connections are up and any
	// prefill is done, just before the measured phase begins (for example to
	// read the server's CPU time).
	Started func()

	// Progress, if set, receives a one-line status every second once the run
	// is two seconds old, rewritten in place with \r.
	Progress io.Writer
}

// MaxDuration bounds a run limited only by a request count.
const MaxDuration = 10 * time.Minute

// ErrConfig marks an unusable Config.
var ErrConfig = errors.New("driver config")

func (c *Config) validate() error {
	if c.Target == "" {
		return fmt.Errorf("%w: no target", ErrConfig)
	}
	if c.Workload == nil {
		return fmt.Errorf("%w: no workload", ErrConfig)
	}
	if c.Conns == 0 {
		c.Conns = 1
	}
	if c.Pipeline == 0 {
		c.Pipeline = 1
	}
	if c.Conns < 0 || c.Conns > 10000 {
		return fmt.Errorf("%w: %d connections: want 1..10000", ErrConfig, c.Conns)
	}
	if c.Pipeline < 0 || c.Pipeline > 4096 {
		return fmt.Errorf("%w: pipeline depth %d: want 1..4096", ErrConfig, c.Pipeline)
	}
	if c.Rate < 0 {
		return fmt.Errorf("%w: negative rate", ErrConfig)
	}
	if c.Requests < 0 || c.Duration < 0 {
		return fmt.Errorf("%w: negative bound", ErrConfig)
	}
	if c.Duration == 0 && c.Requests == 0 {
		return fmt.Errorf("%w: need a duration or a request count", ErrConfig)
	}
	if c.Duration == 0 || c.Duration > MaxDuration {
		c.Duration = MaxDuration
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 2 * time.Second
	}
	if c.IOTimeout == 0 {
		c.IOTimeout = 5 * time.Second
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 4096
	}
	if c.MaxInFlight < 2*c.Pipeline {
		c.MaxInFlight = 2 * c.Pipeline
	}
	if c.PrefillLimit == 0 {
		c.PrefillLimit = 10_000_000
	}
	return nil
}
