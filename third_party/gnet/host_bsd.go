// Copyright (c) 2026 The strata authors. Licensed under the Apache License,
// Version 2.0, like the rest of this module.

//go:build (darwin || dragonfly || freebsd || netbsd || openbsd) && !poll_opt

package gnet

import (
	"time"

	errorx "github.com/panjf2000/gnet/v2/pkg/errors"
)

// Park is Linux-only (an epoll set can hold another epoll descriptor).
func Park(_, _ EventLoop) error { return errorx.ErrUnsupportedOp }

// ReleaseGuests is Linux-only, like Park.
func ReleaseGuests(EventLoop) error { return errorx.ErrUnsupportedOp }

// Guests is Linux-only, like Park: always 0.
func Guests(EventLoop) int { return 0 }

// WaitTime is Linux-only, like Park.
func WaitTime(EventLoop) (time.Duration, error) { return 0, errorx.ErrUnsupportedOp }
