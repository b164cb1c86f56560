package procstop

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestStopWaitsForEveryThread(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if Stopped(cmd.Process.Pid) {
		t.Fatal("a running process reads as stopped")
	}
	if err := Stop(cmd.Process.Pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if !Stopped(cmd.Process.Pid) {
		t.Fatal("Stop returned before the process stopped")
	}
	if err := syscall.Kill(cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}
