package hotmarks

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

// Backend is what Shared needs of the control store: a client of
// store.Memory or etcdstore.
type Backend interface {
	store.Writer
	store.Watcher
	store.Leases
}

var _ Backend = (*store.MemoryClient)(nil)

// Defaults of Config.
const (
	DefaultInterval = time.Second
	DefaultBuffer   = 1024
	DefaultTimeout  = 5 * time.Second
)

// Config tunes Shared. Zero fields take their documented defaults.
type Config struct {
	// Hold is how long a mark stays after the last strata reported it:
	// the TTL of the leases its rows are written with, rounded up to whole
	// seconds (etcd's unit). It is the hot-key tier's Hold. Default
	// hotkeys.DefaultHold; at least 1s.
	Hold time.Duration
	// Interval is how often the buffered marks are written. Default 1s:
	// the detector reports once a second.
	Interval time.Duration
	// Buffer is how many distinct keys wait for the next write; a report
	// of one more is dropped and counted. Default 1024.
	Buffer int
	// Timeout bounds one write (grant and transactions), so that Close
	// and the watch are not held up by a store that does not answer.
	// Default 5s.
	Timeout time.Duration
}

func (c *Config) validate() error {
	if c.Hold == 0 {
		c.Hold = hotkeys.DefaultHold
	}
	// The hold is the hot-key tier's: a shared mark lives by its bounds.
	if c.Hold < hotkeys.MinHold || c.Hold > hotkeys.MaxHold {
		return fmt.Errorf("hotmarks: hold %v is out of range: %v to %v", c.Hold, hotkeys.MinHold, hotkeys.MaxHold)
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Interval < time.Millisecond || c.Interval > c.Hold {
		return fmt.Errorf("hotmarks: interval %v: must be 1ms to the hold (%v)", c.Interval, c.Hold)
	}
	if c.Buffer == 0 {
		c.Buffer = DefaultBuffer
	}
	if c.Buffer < 1 || c.Buffer > 1<<20 {
		return fmt.Errorf("hotmarks: buffer %d: must be 1 to 1048576", c.Buffer)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Timeout < time.Millisecond {
		return fmt.Errorf("hotmarks: timeout %v: must be at least 1ms", c.Timeout)
	}
	return nil
}

// holdSeconds is the lease TTL for hold: whole seconds, rounded up.
func holdSeconds(hold time.Duration) int {
	return int((hold + time.Second - 1) / time.Second)
}

// Stats are Shared's counters since New.
type Stats struct {
	Published   uint64 // marks taken into the buffer (merged ones included)
	Dropped     uint64 // marks dropped: buffer full, or reported after Close
	Invalid     uint64 // marks or rows no rule could have made, ignored
	Cooled      uint64 // marks not written: last seen more than Hold before the write
	Written     uint64 // rows written
	Writes      uint64 // writes that succeeded (one lease each)
	WriteErrors uint64 // writes that failed; their marks went back to the buffer
	WatchErrors uint64 // watches reopened after an error they could not retry
	Marks       int    // marks in the copy now
}

// Shared is the fleet-wide hotkeys.MarkStore over a control store.
type Shared struct {
	b    Backend
	cfg  Config
	ttl  int // lease TTL, seconds
	ctx  context.Context
	stop context.CancelFunc
	done chan struct{}

	mu      sync.Mutex // guards pending, started, closed, wake
	pending map[string]hotkeys.Mark
	started bool
	closed  bool
	// wake, set while the goroutine waits with nothing buffered, ends
	// that wait: the first mark buffered since calls it.
	wake context.CancelFunc

	// view is the copy Marks returns: replaced whole, never modified.
	view atomic.Pointer[[]hotkeys.Mark]
	// now is the latest time Marks was asked at (0: never): the hot-key
	// tier's clock, the one Mark.Seen is on, so no second clock can
	// disagree with it.
	now atomic.Int64

	published, dropped, invalid, cooled       atomic.Uint64
	written, writes, writeErrors, watchErrors atomic.Uint64

	// owned is the store client Close closes (set by Open), once, after
	// the goroutine ended.
	owned     OwnedBackend
	ownedOnce sync.Once
	ownedErr  error
}

var _ hotkeys.MarkStore = (*Shared)(nil)

// New returns a Shared over b; Start starts it. Marks reported before
// Start wait in the buffer.
func New(b Backend, cfg Config) (*Shared, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Shared{b: b, cfg: cfg, ttl: holdSeconds(cfg.Hold), ctx: ctx, stop: stop,
		done: make(chan struct{}), pending: make(map[string]hotkeys.Mark)}
	s.view.Store(&[]hotkeys.Mark{})
	return s, nil
}

// OwnedBackend is a Backend the Shared owns: a store client of its own.
type OwnedBackend interface {
	Backend
	Close() error
}

// Open is New over a store client the Shared owns from the call on: Close closes
// it after the goroutine ended, and on error Open has closed it. The
// marks keep a client of their own because they outlive no tier and need
// no election.
func Open(b OwnedBackend, cfg Config) (*Shared, error) {
	s, err := New(b, cfg)
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	s.owned = b
	return s, nil
}

// Start starts the goroutine that writes and watches the marks. It does
// nothing after the first call or after Close.
func (s *Shared) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return
	}
	s.started = true
	go s.run()
}

// Close stops the goroutine and waits for it; its store calls end with
// it. Then it closes the store client if Open made s. The rows written stay until their leases run out: other stratas may
// still be splitting those keys. Idempotent.
func (s *Shared) Close() error {
	s.mu.Lock()
	started := s.started
	s.closed = true
	s.mu.Unlock()
	s.stop()
	if started {
		<-s.done
	}
	s.ownedOnce.Do(func() {
		if s.owned != nil {
			s.ownedErr = s.owned.Close()
		}
	})
	return s.ownedErr
}

// Publish implements hotkeys.MarkStore: it merges marks into the buffer
// the goroutine writes from. It takes one lock for a few map operations
// per mark and never waits for the store.
func (s *Shared) Publish(marks []hotkeys.Mark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.dropped.Add(uint64(len(marks)))
		return
	}
	for _, m := range marks {
		if check(m) != nil {
			s.invalid.Add(1)
			continue
		}
		if s.addLocked(m) {
			s.published.Add(1)
		}
	}
}

// addLocked merges m into the buffer; false (counted) when the buffer is
// full.
func (s *Shared) addLocked(m hotkeys.Mark) bool {
	if old, ok := s.pending[m.Key]; ok {
		s.pending[m.Key] = merge(old, m)
		return true
	}
	if len(s.pending) >= s.cfg.Buffer {
		s.dropped.Add(1)
		return false
	}
	s.pending[m.Key] = m
	if s.wake != nil {
		s.wake()
		s.wake = nil
	}
	return true
}

// Marks implements hotkeys.MarkStore: the marks of the store's rows as of
// the last watch batch, in key order; the store's leases measure the
// hold. now only tells the writer what time it is on the tier's clock
// (see toWrite). The slice is the caller's.
func (s *Shared) Marks(now int64) []hotkeys.Mark {
	for {
		old := s.now.Load()
		if now <= old || s.now.CompareAndSwap(old, now) {
			break
		}
	}
	return slices.Clone(*s.view.Load())
}

// Stats returns the counters.
func (s *Shared) Stats() Stats {
	return Stats{
		Published: s.published.Load(), Dropped: s.dropped.Load(), Invalid: s.invalid.Load(),
		Cooled: s.cooled.Load(), Written: s.written.Load(), Writes: s.writes.Load(),
		WriteErrors: s.writeErrors.Load(), WatchErrors: s.watchErrors.Load(),
		Marks: len(*s.view.Load()),
	}
}
