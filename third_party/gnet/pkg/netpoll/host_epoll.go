// Copyright (c) 2026 The strata authors. Licensed under the Apache License,
// Version 2.0, like the rest of this module.

//go:build linux && !poll_opt

package netpoll

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/panjf2000/gnet/v2/pkg/logging"
	"github.com/panjf2000/gnet/v2/pkg/queue"
)

// hosting lets one poller's goroutine serve other pollers' events, so that
// lightly loaded event loops cost one thread's wake-ups instead of one
// each. A guest parks its goroutine and its epoll descriptor joins the
// host's set; when the descriptor is readable, the host runs one round of
// the guest (callbacks, tasks, round-end function) with the guest's own
// callback. A guest's state is touched by one goroutine at a time: its own
// until it parks, the host's while hosted, its own again once released.
// The channel hand-offs order the two.
type hosting struct {
	parkOn atomic.Pointer[Poller] // Park's host, until the loop parks
	waited atomic.Int64           // nanoseconds blocked in epoll_wait, once timing
	timing atomic.Bool            // set by the first Waited: no clock reads before

	guests []*Poller        // the pollers this one hosts; its goroutine's own
	cb     PollEventHandler // a parked guest's callback
	wake   chan error       // a parked guest waits here; nil resumes it
	events *eventList       // a hosted guest's event buffer

	// A guest parks by joining pending and queueing a task that adopts
	// it; a host that ends first resumes the pending guests itself, so no
	// guest waits for a task that will never run.
	hostMu  sync.Mutex
	pending []*Poller // guests parked, not yet adopted
	ended   bool      // the host's Polling has returned
}

// guestMark tags a guest's descriptor in its host's set (EpollEvent.Pad,
// which gnet leaves 0 for every other descriptor).
const guestMark = 1

// Park makes p's loop, at the end of its current round, hand its events to
// host's goroutine until host releases it. host must not be parked itself.
// Safe from any goroutine.
func (p *Poller) Park(host *Poller) error {
	p.parkOn.Store(host)
	return p.Trigger(queue.HighPriority, func(any) error { return nil }, nil) // wake p to see it
}

// ReleaseGuests hands every guest its goroutine back. Call it on p's
// goroutine (from a callback, a task or the round-end function).
func (p *Poller) ReleaseGuests() {
	for len(p.guests) > 0 {
		p.release(p.guests[len(p.guests)-1], nil)
	}
}

// Guests is the number of pollers p hosts; on p's goroutine only.
func (p *Poller) Guests() int { return len(p.guests) }

// Waited is the time p's loop has spent blocked waiting for events. A
// parked loop does not wait: its host's time covers its work.
//
// The loop reads the clock around its waits only once Waited has been
// called: the first call starts the count, and wakes the loop so that a
// wait begun before it, uncounted, ends at once.
func (p *Poller) Waited() time.Duration {
	if !p.timing.Load() && p.timing.CompareAndSwap(false, true) {
		_ = p.Trigger(queue.HighPriority, func(any) error { return nil }, nil)
	}
	return time.Duration(p.waited.Load())
}

// park hands p to host and waits to be released. A non-nil error ends the
// loop: it came from p's own round, run by the host.
func (p *Poller) park(host *Poller, cb PollEventHandler) error {
	p.cb = cb
	if p.wake == nil {
		p.wake = make(chan error, 1)
		p.events = newEventList(InitPollEventsCap)
	}
	host.hostMu.Lock()
	if host.ended {
		host.hostMu.Unlock()
		return nil // the host is gone: keep polling alone
	}
	host.pending = append(host.pending, p)
	host.hostMu.Unlock()
	// Even if the eventfd write fails, the task is queued: it runs at the
	// host's next wake, or the host ends and resumes p.
	_ = host.Trigger(queue.HighPriority, func(any) error { host.adopt(); return nil }, nil)
	return <-p.wake
}

// adopt adds the pending guests to p's set; on p's goroutine.
func (p *Poller) adopt() {
	p.hostMu.Lock()
	pending := p.pending
	p.pending = nil
	p.hostMu.Unlock()
	for _, g := range pending {
		ev := unix.EpollEvent{Events: ReadEvents, Fd: int32(g.fd), Pad: guestMark}
		if err := unix.EpollCtl(p.fd, unix.EPOLL_CTL_ADD, g.fd, &ev); err != nil {
			g.wake <- nil
			continue
		}
		p.guests = append(p.guests, g)
	}
}

// endHosting runs when p's Polling returns: the guests it hosts, and the
// ones still waiting to be adopted, poll on their own again.
func (p *Poller) endHosting() {
	p.hostMu.Lock()
	p.ended = true
	pending := p.pending
	p.pending = nil
	p.hostMu.Unlock()
	for _, g := range pending {
		g.wake <- nil
	}
	p.ReleaseGuests()
}

// serveGuest runs one round of the guest whose descriptor is fd, on the
// host's goroutine.
func (p *Poller) serveGuest(fd int) {
	for _, g := range p.guests {
		if g.fd != fd {
			continue
		}
		n, err := epollWaitEvents(g.fd, g.events.events, 0)
		if n <= 0 || err != nil {
			return
		}
		if err = g.round(g.events.events[:n], g.cb); err != nil {
			p.release(g, err) // the guest's loop ends, on its own goroutine
		} else if n == g.events.size {
			g.events.expand()
		}
		return
	}
}

func (p *Poller) release(g *Poller, err error) {
	for i, h := range p.guests {
		if h == g {
			p.guests = append(p.guests[:i], p.guests[i+1:]...)
			break
		}
	}
	if e := unix.EpollCtl(p.fd, unix.EPOLL_CTL_DEL, g.fd, nil); e != nil {
		// The guest polls on its own again either way; its descriptor
		// left in this set would only wake this loop for nothing.
		logging.Errorf("failed to release a parked event-loop, %v", os.NewSyscallError("epoll_ctl del", e))
	}
	g.wake <- err
}
