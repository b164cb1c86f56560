package proxy

import (
	"net"
	"sync"
)

// handshaking is the set of sockets whose TLS handshake is under way, so
// that Stop can close them instead of waiting out their timeouts.
type handshaking struct {
	mu     sync.Mutex // guards conns and closed
	conns  map[net.Conn]struct{}
	closed bool
}

// add enters nc; false once the server is stopping.
func (h *handshaking) add(nc net.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	if h.conns == nil {
		h.conns = map[net.Conn]struct{}{}
	}
	h.conns[nc] = struct{}{}
	return true
}

func (h *handshaking) remove(nc net.Conn) {
	h.mu.Lock()
	delete(h.conns, nc)
	h.mu.Unlock()
}

// closeAll closes every socket still handshaking; add fails from then on.
func (h *handshaking) closeAll() {
	h.mu.Lock()
	h.closed = true
	conns := h.conns
	h.conns = nil
	h.mu.Unlock()
	for nc := range conns {
		_ = nc.Close()
	}
}

// closeIf closes a listener that may be nil.
func closeIf(ln net.Listener) {
	if ln != nil {
		_ = ln.Close()
	}
}
