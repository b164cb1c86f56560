// Copyright (c) 2026 The strata authors. Licensed under the Apache License,
// Version 2.0, like the rest of this module.

//go:build linux && !poll_opt

package gnet

import (
	"time"

	errorx "github.com/panjf2000/gnet/v2/pkg/errors"
)

// Park makes guest, at the end of its current round, stop waiting on its
// own and have host's goroutine serve its events, tasks and round-end
// function, until host releases it (ReleaseGuests) or either loop ends.
// The guest keeps its connections, buffers and index: only the thread that
// serves it changes, so lightly loaded loops cost one thread's wake-ups.
// host must not be parked itself. Safe from any goroutine.
func Park(guest, host EventLoop) error {
	g, ok1 := guest.(*eventloop)
	h, ok2 := host.(*eventloop)
	if !ok1 || !ok2 || g == h {
		return errorx.ErrUnsupportedOp
	}
	return g.poller.Park(h.poller)
}

// ReleaseGuests gives every loop parked on host its own goroutine back.
// Call it on host's goroutine: from a callback, a task or the round-end
// function.
func ReleaseGuests(host EventLoop) error {
	h, ok := host.(*eventloop)
	if !ok {
		return errorx.ErrUnsupportedOp
	}
	h.poller.ReleaseGuests()
	return nil
}

// Guests is the number of loops parked on host; on host's goroutine only.
func Guests(host EventLoop) int {
	if h, ok := host.(*eventloop); ok {
		return h.poller.Guests()
	}
	return 0
}

// WaitTime is the time el has spent blocked waiting for events since the
// first call (which returns 0): the rest of its time it was working. Until
// someone asks, the loop reads no clock around its waits. A parked loop does not
// wait, and its work is its host's time. Safe from any goroutine.
func WaitTime(el EventLoop) (time.Duration, error) {
	l, ok := el.(*eventloop)
	if !ok {
		return 0, errorx.ErrUnsupportedOp
	}
	return l.poller.Waited(), nil
}
