package tickgrid

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pollTimer is a timerfd registered with the Go runtime's network poller.
//
// Its system calls are raw (no entry into the runtime's syscall
// bookkeeping): entering a system call while every processor is idle
// wakes the runtime's monitor thread, which is the wake-up the sleeper
// exists to avoid. Both calls are non-blocking: the descriptor is
// O_NONBLOCK, and a read that finds no expiry parks the goroutine in the
// poller instead.
type pollTimer struct {
	f      *os.File
	rc     syscall.RawConn
	period time.Duration // the interval armed; 0 before the first wait
	count  uint64        // the read buffer: expiries since the last read
	// readFn is tryRead as a value made once: a method value or closure
	// made per read would be an allocation per wake-up of an idle process.
	readFn func(fd uintptr) bool
	rerr   error // tryRead's error, for read
}

func newPollTimer() (*pollTimer, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// A non-blocking descriptor given to os.NewFile is registered with
	// the poller.
	f := os.NewFile(uintptr(fd), "tickgrid-timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	p := &pollTimer{f: f, rc: rc}
	p.readFn = p.tryRead
	return p, nil
}

// wait arms the timer when the period changes, then reads it, parking in
// the poller until it has expired. A periodic timerfd keeps the grid by
// itself: its expiries fall at its first deadline plus whole intervals,
// however late the reader, so an unchanged period needs no re-arming.
func (p *pollTimer) wait(period time.Duration) error {
	if period != p.period {
		if err := p.arm(period); err != nil {
			return err
		}
		p.period = period
	}
	return p.read()
}

// once arms the timer to expire once, d from now, and waits for it; the
// next wait arms the grid afresh.
func (p *pollTimer) once(d time.Duration) error {
	p.period = 0
	if err := p.set(d, 0); err != nil {
		return err
	}
	return p.read()
}

// read parks in the poller until the timer has expired.
func (p *pollTimer) read() error {
	p.rerr = nil
	err := p.rc.Read(p.readFn)
	return errors.Join(err, p.rerr)
}

// tryRead is one read of the descriptor; false asks the poller to wait
// until it is readable.
func (p *pollTimer) tryRead(fd uintptr) bool {
	_, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&p.count)), unsafe.Sizeof(p.count))
	switch e {
	case unix.EAGAIN:
		return false // not expired yet: wait in the poller
	case unix.EINTR:
		return false // not expected of a non-blocking read; read again when readable
	case 0:
		return true
	default:
		p.rerr = e
		return true
	}
}

// arm sets the timer to expire at the next multiple of period on the grid
// and every period after it.
func (p *pollTimer) arm(period time.Duration) error {
	return p.set(Until(time.Now(), period), period)
}

// set arms the timer to expire first after value, then every interval (0:
// once).
func (p *pollTimer) set(value, interval time.Duration) error {
	var spec unix.ItimerSpec
	var cerr error
	err := p.rc.Control(func(fd uintptr) {
		spec.Value = unix.NsecToTimespec(int64(value))
		spec.Interval = unix.NsecToTimespec(int64(interval))
		_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
		if e != 0 {
			cerr = e
		}
	})
	return errors.Join(err, cerr)
}

// close wakes a wait in progress (its Read reports the file closed) and
// releases the descriptor once no call uses it.
func (p *pollTimer) close() { _ = p.f.Close() }
