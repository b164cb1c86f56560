// Package tickclock is the millisecond clock that request timeouts are
// measured on in the memcached pool and the region-link client: one
// ticker goroutine advances it, the event loops stamp requests with it
// and compare stamps with it, so no request reads the time.
//
// A tick advances the clock by the time elapsed since the previous tick,
// but by no more than a bound. When the whole process stops — a long GC
// or VM pause, SIGSTOP — the first tick after it would otherwise jump by
// the length of the stop, and every request in flight would time out at
// once: those sent just before the stop, whose replies are waiting unread
// in their sockets, and those stamped after it with the clock of before.
// The cost of the bound is that a ticker starved for longer than the
// bound lets timeouts run late by the difference; the bound is set well
// above a tick for that reason.
package tickclock

import (
	"sync/atomic"
	"time"
)

// Clock is safe for concurrent Load; Tick and Resume are called by one
// goroutine.
type Clock struct {
	ms      atomic.Int64
	maxStep time.Duration
	last    time.Time // of the previous Tick (its monotonic reading)
	carry   time.Duration
}

// New returns a clock at 0 whose ticks advance it by at most maxStep;
// start is the time of its first reading.
func New(start time.Time, maxStep time.Duration) *Clock {
	return &Clock{maxStep: maxStep, last: start}
}

// Tick advances the clock to now, by at most the bound.
func (c *Clock) Tick(now time.Time) {
	d := now.Sub(c.last)
	c.last = now
	if d < 0 {
		d = 0
	}
	d = min(d, c.maxStep) + c.carry
	// Keep the sub-millisecond rest, so that ticks of a fraction of a
	// millisecond still add up.
	ms := d.Milliseconds()
	c.carry = d - time.Duration(ms)*time.Millisecond
	c.ms.Add(ms)
}

// Load is the clock in milliseconds.
func (c *Clock) Load() int64 { return c.ms.Load() }

// Resume restarts the clock at now after its ticker slept: the time since
// the previous Tick is not counted. A ticker sleeps only while nothing is
// measured on the clock, so there is nothing that time would age.
func (c *Clock) Resume(now time.Time) {
	c.last = now
	c.carry = 0
}

// BackingOff reports whether a connection in backoff still waits at now
// (clock ms). Its loop is not quiet until the backoff is over: a ticker
// that slept before retryAt would stop the clock there and refuse the
// connection's requests for good.
func BackingOff(inBackoff bool, retryAt, now int64) bool { return inBackoff && now < retryAt }
