//go:build !linux

package proxy

import (
	"errors"
	"net"

	"github.com/panjf2000/gnet/v2"
)

// rawAccept is Linux's (accept_linux.go); elsewhere the server accepts
// through Go's listener and Engine.Register.
type rawAccept struct{}

func newRawAccept(net.Listener) *rawAccept { return nil }

func (*rawAccept) next(gnet.Engine, any) error { return errors.New("proxy: raw accept is Linux's") }

func (*rawAccept) close() {}
