// Package procstop stops a process the tests started, and returns only
// once it has stopped.
//
// kill(2) with SIGSTOP returns before the signal is delivered to every
// thread of the target; a test that sends a request right after it can
// see that request answered by a process it believes frozen. Stop waits
// until /proc shows every thread of the process in the stopped state.
package procstop

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Stop sends SIGSTOP to pid and waits, at most within, until each of its
// threads is stopped.
func Stop(pid int, within time.Duration) error {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("procstop: stop %d: %w", pid, err)
	}
	deadline := time.Now().Add(within)
	for !Stopped(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("procstop: %d not stopped within %v", pid, within)
		}
		time.Sleep(time.Millisecond) // polling the kernel's view, with a deadline
	}
	return nil
}

// Stopped reports whether every thread of pid is in the stopped state.
func Stopped(pid int) bool {
	tasks := fmt.Sprintf("/proc/%d/task", pid)
	ids, err := os.ReadDir(tasks)
	if err != nil || len(ids) == 0 {
		return false
	}
	for _, id := range ids {
		b, err := os.ReadFile(tasks + "/" + id.Name() + "/stat")
		// The state follows the parenthesised command name.
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}
