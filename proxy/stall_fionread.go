//go:build linux && (amd64 || arm64 || 386 || arm || riscv64 || loong64 || s390x)

package proxy

import (
	"syscall"
	"unsafe"
)

// unreadBytes is what the kernel holds unread on socket fd (FIONREAD); 0
// if it cannot say.
func unreadBytes(fd int) int {
	var n int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), fionread, uintptr(unsafe.Pointer(&n))); e != 0 {
		return 0
	}
	return int(n)
}

// fionread is Linux's FIONREAD (SIOCINQ for a TCP socket) on the
// architectures this file builds for; the others number it differently.
const fionread = 0x541B
