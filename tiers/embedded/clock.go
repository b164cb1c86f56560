package embedded

import (
	"sync"
	"sync/atomic"
	"time"
)

// Clock is a wall clock that advances once per tick, the way memcached
// keeps its current_time: every expiry and access-time decision of a store
// then costs an atomic load instead of a read of the system clock (about
// 40 ns, a third of a get hit). Exptimes are whole seconds, so a clock that
// is at most one tick behind changes no decision memcached would make
// differently.
//
// The ticker runs only while the clock is read: after a tick in which
// nobody read it, it sleeps, and Now reads the system clock itself until
// its next call wakes the ticker. An idle process therefore does not wake
// once a second for it, and Now is never more than one tick behind.
//
// The owner starts it with NewClock and must Stop it; Stop is idempotent.
type Clock struct {
	now   atomic.Int64
	state atomic.Int32 // clockTicking, clockAsleep or clockWaking
	read  atomic.Bool  // Now was called since the last tick
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// The clock's states. Only clockTicking lets Now return the stored time:
// asleep it may be stale, and while waking it is being refreshed.
const (
	clockTicking int32 = iota
	clockAsleep
	clockWaking
)

// NewClock starts a clock that reads the system clock every tick (a
// second when tick is 0) on a goroutine the Clock owns.
func NewClock(tick time.Duration) *Clock {
	if tick <= 0 {
		tick = time.Second
	}
	c := &Clock{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	c.now.Store(time.Now().Unix())
	go c.run(tick)
	return c
}

func (c *Clock) run(tick time.Duration) {
	defer close(c.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case now := <-t.C:
			c.now.Store(now.Unix())
			if c.read.Swap(false) {
				continue
			}
			// Nobody read the last tick: stop until somebody does. A Now
			// that saw clockTicking before this store returns the time
			// just stored, which is fresh.
			t.Stop()
			c.state.Store(clockAsleep)
			select {
			case <-c.stop:
				return
			case <-c.wake:
			}
			t.Reset(tick)
		}
	}
}

// Now is the current Unix time in seconds as of the last tick; pass it as
// Config.Now.
func (c *Clock) Now() int64 {
	if c.state.Load() == clockTicking {
		if !c.read.Load() {
			c.read.Store(true) // once per tick, not per call
		}
		return c.now.Load()
	}
	n := time.Now().Unix()
	// One caller wakes the ticker; it stores a fresh time before letting
	// others read the stored one again.
	if c.state.CompareAndSwap(clockAsleep, clockWaking) {
		c.now.Store(n)
		c.read.Store(true)
		c.state.Store(clockTicking)
		c.wake <- struct{}{} // buffered: the ticker is asleep or about to be
	}
	return n
}

// Stop ends the clock's goroutine and waits for it.
func (c *Clock) Stop() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}
