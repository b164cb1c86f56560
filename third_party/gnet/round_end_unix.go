// Copyright (c) 2026 The strata authors. Licensed under the Apache License,
// Version 2.0, like the rest of this module.

//go:build (darwin || dragonfly || freebsd || linux || netbsd || openbsd) && !poll_opt

package gnet

import errorx "github.com/panjf2000/gnet/v2/pkg/errors"

// SetRoundEnd makes fn run on el's goroutine at the end of every round of
// the loop: once the callbacks for every event one poll returned, and the
// tasks queued to the loop, have run, and before the loop polls again. A
// nil fn removes it.
//
// It is what a user needs to batch work across the connections of a round
// (one write to a shared socket for the requests of every connection
// served in it). The alternative, a task queued with Execute, costs an
// eventfd write and one more poll per round.
func SetRoundEnd(el EventLoop, fn func()) error {
	l, ok := el.(*eventloop)
	if !ok {
		return errorx.ErrUnsupportedOp
	}
	l.poller.SetRoundEnd(fn)
	return nil
}
