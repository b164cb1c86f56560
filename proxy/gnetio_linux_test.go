//go:build linux

package proxy_test

import (
	"bytes"
	"testing"

	gio "github.com/panjf2000/gnet/v2/pkg/io"
	"golang.org/x/sys/unix"
)

// TestGnetRawIO: the carried gnet reads and writes client sockets with
// its own system-call wrappers (third_party/gnet/pkg/io), which bypass
// the scheduler's bookkeeping. They must still move every byte: a vector
// longer than the stack array, with empty pieces among the others, and
// report an empty non-blocking socket as EAGAIN, which gnet compares by
// value.
func TestGnetRawIO(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])

	var iov [][]byte
	var want []byte
	for i := range 40 {
		b := bytes.Repeat([]byte{byte('a' + i%26)}, i%5) // every fifth piece empty
		iov = append(iov, b)
		want = append(want, b...)
	}
	n, err := gio.Writev(fds[0], iov)
	if err != nil || n != len(want) {
		t.Fatalf("Writev: %d, %v; want %d, nil", n, err, len(want))
	}
	got := make([]byte, len(want)+10)
	half := len(want) / 2
	n, err = gio.Readv(fds[1], [][]byte{got[:0], got[:half], got[half : len(want)+10]})
	if err != nil || n != len(want) || !bytes.Equal(got[:n], want) {
		t.Fatalf("Readv: %d, %v, %q; want %d, nil, %q", n, err, got[:max(n, 0)], len(want), want)
	}

	if n, err = gio.Write(fds[0], []byte("hello")); err != nil || n != 5 {
		t.Fatalf("Write: %d, %v", n, err)
	}
	buf := make([]byte, 16)
	if n, err = gio.Read(fds[1], buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("Read: %q, %v", buf[:max(n, 0)], err)
	}
	if n, err = gio.Read(fds[1], buf); err != unix.EAGAIN {
		t.Fatalf("Read of an empty socket: %d, %v; want EAGAIN", n, err)
	}
	if n, err = gio.Writev(fds[0], [][]byte{nil, {}}); n != 0 || err != nil {
		t.Fatalf("Writev of nothing: %d, %v", n, err)
	}
}
