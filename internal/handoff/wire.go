package handoff

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// send writes m as one packet, with fds attached as SCM_RIGHTS.
func send(c *net.UnixConn, m *Message, fds []int) error {
	b, err := m.Encode()
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	_, _, err = c.WriteMsgUnix(b, oob, nil)
	return err
}

// recv reads one packet and the descriptors attached to it, which the
// caller owns (Go receives them close-on-exec). A packet or rights cut
// short by the buffers is refused: its descriptors are closed.
func recv(c *net.UnixConn) (Message, []int, error) {
	b := make([]byte, maxMessage)
	oob := make([]byte, syscall.CmsgSpace(4*maxEntries))
	n, oobn, flags, _, err := c.ReadMsgUnix(b, oob)
	if err != nil {
		return Message{}, nil, err
	}
	var fds []int
	if oobn > 0 {
		cms, err := syscall.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return Message{}, nil, fmt.Errorf("handoff: control message: %w", err)
		}
		for _, cm := range cms {
			if rs, err := syscall.ParseUnixRights(&cm); err == nil {
				fds = append(fds, rs...)
			}
		}
	}
	if flags&(syscall.MSG_TRUNC|syscall.MSG_CTRUNC) != 0 {
		closeFDs(fds)
		return Message{}, nil, errors.New("handoff: message or its sockets cut short")
	}
	if n == 0 {
		closeFDs(fds)
		return Message{}, nil, errors.New("handoff: the other side closed the connection")
	}
	m, err := Decode(b[:n])
	if err != nil {
		closeFDs(fds)
		return Message{}, nil, err
	}
	return m, fds, nil
}

// dupListener duplicates l's descriptor (close-on-exec) for sending; the
// caller closes the duplicate once sent. The socket stays l's.
func dupListener(l net.Listener) (int, error) {
	sc, ok := l.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("%T has no descriptor", l)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(s uintptr) {
		syscall.ForkLock.RLock()
		fd, derr = syscall.Dup(int(s))
		if derr == nil {
			syscall.CloseOnExec(fd)
		}
		syscall.ForkLock.RUnlock()
	}); err != nil {
		return -1, err
	}
	return fd, derr
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		_ = syscall.Close(fd)
	}
}
