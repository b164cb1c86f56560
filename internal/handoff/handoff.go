package handoff

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Timeouts of the exchange. The successor answers Hello at once; between
// Offer and Ready it starts serving (loading a snapshot, say), which may
// take a while, so the running process waits readyTimeout for it.
const (
	replyTimeout = 10 * time.Second
	readyTimeout = 2 * time.Minute
)

// Role names the handoff socket itself among the offered sockets.
const Role = "handoff"

// Listener is one socket offered to a successor.
type Listener struct {
	Role string
	Addr string       // as configured; a successor uses the socket if it is configured alike
	L    net.Listener // must be a syscall.Conn (every *net.TCPListener and *net.UnixListener is)
}

// inherited is one socket received from the predecessor.
type inherited struct {
	Entry
	ln net.Listener
}

// Handoff is one process's end of the handoff socket. Its methods are
// safe for concurrent use.
type Handoff struct {
	cfg Config
	log *slog.Logger
	pid uint32

	mu sync.Mutex // guards ln, owned, inherited, pred and closed
	ln *net.UnixListener
	// owned: the socket's path is this process's to unlink on Close;
	// false once a successor took over.
	owned bool
	// inherited holds the predecessor's sockets not yet taken (Take);
	// pred is the connection to it until Serve says Ready, predPID its id.
	inherited map[string]inherited
	pred      *net.UnixConn
	predPID   uint32
	closed    bool
	// cur is the successor being served, closed by Close so that a wait
	// for its Ready does not hold Close up.
	cur *net.UnixConn

	successor chan struct{} // closed when a successor took over
	// heir is the connection to the successor that took over, held open
	// until Close: its end tells the successor this process is gone.
	heir *net.UnixConn
	gone chan struct{} // closed when the predecessor that took Ready exited
	// old is the connection to that predecessor while awaitGone reads it;
	// Close closes it, which ends awaitGone.
	old  *net.UnixConn
	done chan struct{} // closed when the accept goroutine returned; nil before Serve
}

// Open finds the process running on cfg.Socket, if any, and receives its
// sockets (Take them, then Serve). If nobody answers there, it removes
// what is left at the path and listens on it. version goes into the
// messages, for the other side's log.
func Open(cfg Config, version string, log *slog.Logger) (*Handoff, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handoff{cfg: cfg, log: log, pid: uint32(os.Getpid()), successor: make(chan struct{}), gone: make(chan struct{})}
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: cfg.Socket, Net: "unixpacket"})
	switch {
	case err == nil:
		if err := h.receive(c, version); err != nil {
			_ = c.Close()
			return nil, err
		}
		return h, nil
	case errors.Is(err, syscall.ECONNREFUSED):
		// A socket file nobody listens on: left by a process that died.
		log.Info("handoff: removing a stale socket nobody answers on", "socket", cfg.Socket)
		if err := os.Remove(cfg.Socket); err != nil {
			return nil, fmt.Errorf("handoff: remove stale %s: %w", cfg.Socket, err)
		}
	case errors.Is(err, syscall.ENOENT):
	default:
		return nil, fmt.Errorf("handoff: %s: %w", cfg.Socket, err)
	}
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: cfg.Socket, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("handoff: listen on %s: %w", cfg.Socket, err)
	}
	ln.SetUnlinkOnClose(false) // Close unlinks only while owned
	h.ln, h.owned = ln, true
	return h, nil
}

// receive runs steps 1 and 2 of the exchange on c.
func (h *Handoff) receive(c *net.UnixConn, version string) error {
	if err := send(c, &Message{Kind: Hello, PID: h.pid, Note: version}, nil); err != nil {
		return err
	}
	_ = c.SetReadDeadline(time.Now().Add(replyTimeout))
	m, fds, err := recv(c)
	if err != nil {
		return fmt.Errorf("handoff: from the running process on %s: %w", h.cfg.Socket, err)
	}
	if m.Kind == Refuse {
		closeFDs(fds)
		return fmt.Errorf("handoff: the running process (pid %d) refused: %s", m.PID, m.Note)
	}
	if m.Kind != Offer || len(fds) != len(m.Entries) {
		closeFDs(fds)
		return fmt.Errorf("handoff: want an offer with %d sockets, got %s with %d", len(m.Entries), m.Kind, len(fds))
	}
	h.inherited = map[string]inherited{}
	for i, e := range m.Entries {
		f := os.NewFile(uintptr(fds[i]), e.Role)
		ln, err := net.FileListener(f)
		_ = f.Close()
		if err != nil {
			h.closeInherited()
			closeFDs(fds[i+1:])
			return fmt.Errorf("handoff: socket %s from pid %d: %w", e.Role, m.PID, err)
		}
		h.inherited[e.Role] = inherited{Entry: e, ln: ln}
	}
	h.pred, h.predPID = c, m.PID
	h.log.Info("handoff: received listening sockets", "from_pid", m.PID, "from_version", m.Note, "sockets", describe(m.Entries))
	return nil
}

// Inherited reports whether this process received a predecessor's sockets.
func (h *Handoff) Inherited() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pred != nil
}

// Take returns the predecessor's socket of role if it was configured with
// addr (or is bound to it), and nil otherwise: then the caller binds its
// own. The socket is the caller's from then on.
func (h *Handoff) Take(role, addr string) net.Listener {
	h.mu.Lock()
	defer h.mu.Unlock()
	in, ok := h.inherited[role]
	if !ok || (addr != in.Addr && addr != in.Bound) {
		return nil
	}
	delete(h.inherited, role)
	return in.ln
}

// Serve finishes the exchange and serves successors. In a successor, the
// caller serves on what it took; Serve closes the sockets it did not
// take, tells the predecessor Ready, waits for Done and then serves the
// handoff socket it inherited. offer lists this process's sockets as a
// successor should receive them; the handoff socket is added to them.
func (h *Handoff) Serve(offer func() []Listener) error {
	h.mu.Lock()
	pred, predPID := h.pred, h.predPID
	h.mu.Unlock()
	if pred != nil {
		if err := h.takeOver(pred, predPID); err != nil {
			return err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errors.New("handoff: closed")
	}
	h.done = make(chan struct{})
	go h.acceptLoop(h.ln, offer)
	return nil
}

// takeOver runs steps 3 to 5 on the successor's side.
func (h *Handoff) takeOver(pred *net.UnixConn, predPID uint32) error {
	h.mu.Lock()
	hs, ok := h.inherited[Role]
	delete(h.inherited, Role)
	var unused []string
	for r, in := range h.inherited {
		unused = append(unused, r+"="+in.Bound)
	}
	h.closeInheritedLocked()
	h.pred = nil
	h.mu.Unlock()
	handedOver := false
	defer func() {
		if !handedOver {
			_ = pred.Close()
		}
	}()
	ul, isUnix := hs.ln.(*net.UnixListener)
	if !ok || !isUnix {
		return fmt.Errorf("handoff: pid %d did not hand over its handoff socket", predPID)
	}
	ul.SetUnlinkOnClose(false)
	if len(unused) > 0 {
		h.log.Warn("handoff: sockets of the predecessor not configured here, closed", "sockets", strings.Join(unused, " "))
	}
	if err := send(pred, &Message{Kind: Ready, PID: h.pid}, nil); err != nil {
		_ = ul.Close()
		return fmt.Errorf("handoff: telling pid %d to go: %w", predPID, err)
	}
	_ = pred.SetReadDeadline(time.Now().Add(replyTimeout))
	m, fds, err := recv(pred)
	closeFDs(fds)
	if err != nil || m.Kind != Done {
		// It heard Ready or died: either way this process serves now.
		h.log.Warn("handoff: no goodbye from the predecessor; serving anyway", "pid", predPID, "got", m.Kind, "err", err)
	}
	h.mu.Lock()
	h.ln, h.owned = ul, true
	h.mu.Unlock()
	h.log.Info("handoff: took over", "from_pid", predPID)
	handedOver = true
	h.mu.Lock()
	h.old = pred
	h.mu.Unlock()
	go h.awaitGone(pred, predPID)
	return nil
}

// Gone, in a process that took over, is closed once the predecessor has
// finished its shutdown (it closes the handoff connection last, when it
// closes its Handoff) or died. A successor that must read what the
// predecessor saves on the way out (a snapshot) waits for it before it
// accepts; connections meanwhile wait in the sockets' backlogs. Never
// closed in a process that took nothing over.
func (h *Handoff) Gone() <-chan struct{} { return h.gone }

// awaitGone reads the predecessor's connection until it ends.
func (h *Handoff) awaitGone(pred *net.UnixConn, pid uint32) {
	defer close(h.gone)
	defer pred.Close()
	_ = pred.SetReadDeadline(time.Time{})
	var b [64]byte
	for {
		if _, err := pred.Read(b[:]); err != nil {
			h.mu.Lock()
			closed := h.closed
			h.mu.Unlock()
			if !closed {
				h.log.Info("handoff: the predecessor has finished", "pid", pid)
			}
			return
		}
	}
}

// Successor is closed once a successor took over; the owner then shuts
// down as on SIGTERM.
func (h *Handoff) Successor() <-chan struct{} { return h.successor }

// acceptLoop serves successors one at a time until one takes over or ln
// closes. Another successor waits in the socket's backlog meanwhile; after
// a takeover it is the new process that answers it.
func (h *Handoff) acceptLoop(ln *net.UnixListener, offer func() []Listener) {
	defer close(h.done)
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				h.log.Error("handoff: accept", "err", err)
			}
			return
		}
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			_ = c.Close()
			return
		}
		h.cur = c
		h.mu.Unlock()
		took := h.handle(c, ln, offer)
		h.mu.Lock()
		h.cur = nil
		if took && !h.closed {
			h.heir = c // closed by Close, when this process is done
			c = nil
		}
		h.mu.Unlock()
		if c != nil {
			_ = c.Close()
		}
		if took {
			return
		}
	}
}

// handle runs the running process's side of one exchange and reports
// whether the successor took over.
func (h *Handoff) handle(c *net.UnixConn, ln *net.UnixListener, offer func() []Listener) bool {
	_ = c.SetReadDeadline(time.Now().Add(replyTimeout))
	m, fds, err := recv(c)
	closeFDs(fds)
	if err != nil || m.Kind != Hello {
		h.log.Warn("handoff: not a successor's hello; ignored", "got", m.Kind, "err", err)
		_ = send(c, &Message{Kind: Refuse, PID: h.pid, Note: fmt.Sprintf("want hello, got %s (%v)", m.Kind, err)}, nil)
		return false
	}
	ls := append(offer(), Listener{Role: Role, Addr: h.cfg.Socket, L: ln})
	out := Message{Kind: Offer, PID: h.pid, Note: "", Entries: make([]Entry, 0, len(ls))}
	dups := make([]int, 0, len(ls))
	defer func() { closeFDs(dups) }()
	for _, l := range ls {
		fd, err := dupListener(l.L)
		if err != nil {
			h.log.Error("handoff: cannot pass a socket; refusing the successor", "role", l.Role, "err", err)
			_ = send(c, &Message{Kind: Refuse, PID: h.pid, Note: fmt.Sprintf("%s: %v", l.Role, err)}, nil)
			return false
		}
		dups = append(dups, fd)
		out.Entries = append(out.Entries, Entry{Role: l.Role, Addr: l.Addr, Bound: l.L.Addr().String()})
	}
	h.log.Info("handoff: a successor asks for the listening sockets", "pid", m.PID, "version", m.Note, "sockets", describe(out.Entries))
	if err := send(c, &out, dups); err != nil {
		h.log.Warn("handoff: offer not sent; still serving", "pid", m.PID, "err", err)
		return false
	}
	_ = c.SetReadDeadline(time.Now().Add(readyTimeout))
	r, fds, err := recv(c)
	closeFDs(fds)
	if err != nil || r.Kind != Ready {
		h.log.Warn("handoff: the successor did not take over; still serving", "pid", m.PID, "got", r.Kind, "err", err)
		return false
	}
	// From here the successor serves: stop taking successors (its own
	// copy of the socket stays), and say so.
	h.mu.Lock()
	h.owned = false
	h.mu.Unlock()
	_ = ln.Close()
	_ = send(c, &Message{Kind: Done, PID: h.pid}, nil)
	h.log.Info("handoff: the successor took over; stopping", "pid", m.PID, "sockets", describe(out.Entries))
	close(h.successor)
	return true
}

// Close stops serving successors and waits for the goroutine; it unlinks
// the socket's path unless a successor took over, and closes sockets
// received but never taken. It is idempotent.
func (h *Handoff) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	ln, owned, done, pred, cur, heir, old := h.ln, h.owned, h.done, h.pred, h.cur, h.heir, h.old
	h.closeInheritedLocked()
	h.mu.Unlock()
	if cur != nil {
		_ = cur.Close() // a successor mid-exchange finds this process gone
	}
	if old != nil {
		_ = old.Close() // ends awaitGone
	}
	if heir != nil {
		_ = heir.Close() // the successor learns this process finished (Gone)
	}
	if pred != nil {
		_ = pred.Close() // the predecessor keeps serving
	}
	var err error
	if ln != nil {
		err = ln.Close()
		if owned {
			if e := os.Remove(h.cfg.Socket); e != nil && !errors.Is(e, os.ErrNotExist) {
				err = errors.Join(err, e)
			}
		}
	}
	if done != nil {
		<-done
	}
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (h *Handoff) closeInherited() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closeInheritedLocked()
}

func (h *Handoff) closeInheritedLocked() {
	for r, in := range h.inherited {
		if r == Role {
			if ul, ok := in.ln.(*net.UnixListener); ok {
				ul.SetUnlinkOnClose(false) // the path is the predecessor's
			}
		}
		_ = in.ln.Close()
		delete(h.inherited, r)
	}
}

func describe(es []Entry) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Role + "=" + e.Bound
	}
	return strings.Join(parts, " ")
}
