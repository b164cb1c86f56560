package driver

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// pacer sleeps precisely: a timerfd expires on the kernel's
// high-resolution clock, and reading it parks only the goroutine, because
// the runtime's poller waits on the descriptor (epoll returns when the
// timer fires, whatever its own millisecond timeout). A plain nanosleep
// would be as precise but would hold the thread and its P in the
// syscall, starving the receivers on a small machine.
type pacer struct {
	fd int
	f  *os.File // owns fd; reads wait in the poller
}

// newPacer returns a pacer, or nil where no timerfd can be made; a nil
// pacer falls back to the runtime's sleep.
func newPacer() *pacer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	return &pacer{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}
}

// sleep waits d, which is at most preciseSpan.
func (p *pacer) sleep(d time.Duration) {
	if p == nil || d <= 0 {
		time.Sleep(d)
		return
	}
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(p.fd, 0, &its, nil); err != nil {
		time.Sleep(d)
		return
	}
	var buf [8]byte // the expiry count, which the pacer does not need
	_, _ = p.f.Read(buf[:])
}

func (p *pacer) close() {
	if p != nil {
		p.f.Close()
	}
}
