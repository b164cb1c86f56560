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
// The owner starts it with NewClock and must Stop it; Stop is idempotent.
type Clock struct {
	now  atomic.Int64
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// NewClock starts a clock that reads the system clock every tick (a
// second when tick is 0) on a goroutine the Clock owns.
func NewClock(tick time.Duration) *Clock {
	if tick <= 0 {
		tick = time.Second
	}
	c := &Clock{stop: make(chan struct{}), done: make(chan struct{})}
	c.now.Store(time.Now().Unix())
	go func() {
		defer close(c.done)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case now := <-t.C:
				c.now.Store(now.Unix())
			}
		}
	}()
	return c
}

// Now is the current Unix time in seconds as of the last tick; pass it as
// Config.Now.
func (c *Clock) Now() int64 { return c.now.Load() }

// Stop ends the clock's goroutine and waits for it.
func (c *Clock) Stop() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}
