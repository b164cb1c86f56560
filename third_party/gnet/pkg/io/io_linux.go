/*
 * Copyright (c) 2021 The Gnet Authors. All rights reserved.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 *
 */

package io

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The calls below are made on non-blocking sockets only, so they never
// wait: they go through RawSyscall, which does not tell Go's scheduler a
// system call began. Through Syscall, a loop thread the kernel preempts
// inside a write (common when the peer it wakes runs on the same core)
// is seen by sysmon as blocked, its P is handed to another thread, and
// the loop pays a scheduler round trip to get one back. (strata: see
// README.md.)

// Read calls read() on a non-blocking descriptor.
func Read(fd int, p []byte) (int, error) { return raw(unix.SYS_READ, fd, p) }

// Write calls write() on a non-blocking descriptor.
func Write(fd int, p []byte) (int, error) { return raw(unix.SYS_WRITE, fd, p) }

func raw(trap uintptr, fd int, p []byte) (int, error) {
	var b unsafe.Pointer
	if len(p) > 0 {
		b = unsafe.Pointer(&p[0])
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(b), uintptr(len(p)))
	return int(n), errnoErr(e)
}

// Writev calls writev() on a non-blocking descriptor.
func Writev(fd int, iov [][]byte) (int, error) {
	return rawv(unix.SYS_WRITEV, fd, iov)
}

// Readv calls readv() on a non-blocking descriptor.
func Readv(fd int, iov [][]byte) (int, error) {
	return rawv(unix.SYS_READV, fd, iov)
}

func rawv(trap uintptr, fd int, iov [][]byte) (int, error) {
	var small [16]unix.Iovec
	vs := small[:0]
	if len(iov) > len(small) {
		vs = make([]unix.Iovec, 0, len(iov))
	}
	for _, b := range iov {
		if len(b) == 0 {
			continue
		}
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&vs[0])), uintptr(len(vs)))
	return int(n), errnoErr(e)
}

var (
	errEAGAIN error = unix.EAGAIN
	errEINTR  error = unix.EINTR
)

// errnoErr boxes the common errors without allocating, like x/sys/unix.
func errnoErr(e unix.Errno) error {
	switch e {
	case 0:
		return nil
	case unix.EAGAIN:
		return errEAGAIN
	case unix.EINTR:
		return errEINTR
	}
	return e
}
