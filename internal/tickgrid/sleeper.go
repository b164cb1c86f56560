package tickgrid

import (
	"sync"
	"time"
)

// Sleeper blocks one goroutine until the next multiple of a period on the
// grid, for a goroutine that does its periodic work itself rather than
// receiving ticks from a channel.
//
// Where the platform has a timer file descriptor (Linux: timerfd), it
// waits in the Go runtime's network poller, not on a runtime timer. In an
// idle process that is the difference between one thread wake-up and
// four to six: a due runtime timer wakes the thread blocked in the poller
// (whose epoll timeout is rounded down to the millisecond, so it often
// wakes twice), the runtime's monitor thread (which, with every processor
// idle, sleeps exactly until the next runtime timer) and a spinning
// thread offered the goroutine the timer made runnable. A readable
// descriptor wakes only the thread in the poller, which then runs the
// goroutine itself. Elsewhere, or when no descriptor can be had, a
// runtime timer does the same job.
//
// Sleep returns at the first multiple of its period that comes after the
// instant it last returned for; when that instant has already passed (the
// goroutine ran late), it returns at once, and the next Sleep waits for
// the first multiple after now. A Sleep with a new period starts afresh:
// the first multiple after now.
//
// Sleep is for one goroutine; Close may be called from any, and is
// idempotent.
type Sleeper struct {
	poll *pollTimer // nil: the runtime timer below does the waiting; set once

	// Owned by the sleeping goroutine.
	pollFailed bool // the descriptor failed: the runtime timer took over
	timer      *time.Timer
	period     time.Duration
	next       time.Time // the instant the runtime timer waits for

	closeOnce sync.Once
	closed    chan struct{}
}

// NewSleeper returns a sleeper; it never fails, falling back to a runtime
// timer where no timer descriptor can be had.
func NewSleeper() *Sleeper {
	s := &Sleeper{closed: make(chan struct{})}
	if p, err := newPollTimer(); err == nil {
		s.poll = p
	}
	return s
}

// Sleep waits for the next multiple of period (which must be positive) on
// the grid; it reports false, at once or while waiting, once Close has
// been called.
func (s *Sleeper) Sleep(period time.Duration) bool {
	if period <= 0 {
		panic("tickgrid: non-positive period")
	}
	if s.poll != nil && !s.pollFailed {
		err := s.poll.wait(period)
		if err == nil {
			return true
		}
		if s.isClosed() {
			return false
		}
		// Not expected of a timerfd; the runtime timer keeps the sleeper
		// on the grid rather than letting its goroutine stop.
		s.pollFailed = true
	}
	now := time.Now()
	if period != s.period || s.next.IsZero() {
		s.period, s.next = period, now.Add(Until(now, period))
	}
	if d := s.next.Sub(now); d > 0 && !s.after(d) {
		return false
	}
	if s.isClosed() {
		return false
	}
	now = time.Now()
	s.next = now.Add(Until(now, period))
	return true
}

// SleepFor waits d from now, off the grid, for a goroutine that keeps a
// timetable of its own finer than the runtime's timers: they wait in
// epoll_wait, whose timeout is whole milliseconds, so a runtime timer due
// in 300 µs fires a millisecond later, where the descriptor fires on time.
// It reports false, at once or while waiting, once Close has been called;
// a later Sleep starts the grid afresh.
func (s *Sleeper) SleepFor(d time.Duration) bool {
	s.next = time.Time{}
	if s.poll != nil && !s.pollFailed && d > 0 {
		if err := s.poll.once(d); err == nil {
			return true
		}
		if s.isClosed() {
			return false
		}
		s.pollFailed = true
	}
	if d > 0 && !s.after(d) {
		return false
	}
	return !s.isClosed()
}

// after waits d on the runtime timer; false when Close ends the wait.
func (s *Sleeper) after(d time.Duration) bool {
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	select {
	case <-s.closed:
		s.timer.Stop()
		return false
	case <-s.timer.C:
		return true
	}
}

func (s *Sleeper) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// Close wakes a Sleep in progress, which reports false, as does every
// later one.
func (s *Sleeper) Close() {
	s.closeOnce.Do(func() {
		close(s.closed)
		if s.poll != nil {
			s.poll.close()
		}
	})
}

// Polled reports whether the sleeper waits in the network poller rather
// than on a runtime timer. Call it from the sleeping goroutine.
func (s *Sleeper) Polled() bool { return s.poll != nil && !s.pollFailed }
