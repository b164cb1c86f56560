package main

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/strata-cache/strata/config"
	"github.com/strata-cache/strata/internal/handoff"
)

// The roles of the listening sockets an upgrade hands over.
const (
	roleMemcached = "memcached"
	roleAdmin     = "admin"
	roleLink      = "link"
	rolePlain     = "memcached-plain" // listen_plain beside a TLS listener
)

// inheritedSockets are a predecessor's listening sockets this process
// serves on; a nil one is bound afresh.
type inheritedSockets struct{ client, plain, link, admin net.Listener }

func (in inheritedSockets) closeAdmin() {
	if in.admin != nil {
		_ = in.admin.Close()
	}
}

// openHandoff finds the strata running on [server] handoff_socket and
// receives its sockets, or listens there; nil without the key.
func openHandoff(s *config.Settings, log *slog.Logger) (*handoff.Handoff, inheritedSockets, error) {
	if !s.Handoff.Enabled() {
		return nil, inheritedSockets{}, nil
	}
	h, err := handoff.Open(s.Handoff, version, log)
	if err != nil {
		return nil, inheritedSockets{}, err
	}
	in := inheritedSockets{client: h.Take(roleMemcached, s.Proxy.Listen), admin: h.Take(roleAdmin, s.Admin.Listen)}
	if s.Locality.LinkListen != "" {
		in.link = h.Take(roleLink, s.Locality.LinkListen)
	}
	if s.Proxy.ListenPlain != "" {
		in.plain = h.Take(rolePlain, s.Proxy.ListenPlain)
	}
	return h, in, nil
}

// handoffOffer lists the sockets a successor receives, with the addresses
// they were configured with (the successor uses those it is configured
// alike).
func (a *app) handoffOffer() []handoff.Listener {
	s := a.settings()
	client, plain, link := a.proxy.Listeners()
	ls := []handoff.Listener{
		{Role: roleMemcached, Addr: s.Proxy.Listen, L: client},
		{Role: roleAdmin, Addr: s.Admin.Listen, L: a.admin.Listener()},
	}
	if link != nil {
		ls = append(ls, handoff.Listener{Role: roleLink, Addr: s.Locality.LinkListen, L: link})
	}
	if plain != nil {
		ls = append(ls, handoff.Listener{Role: rolePlain, Addr: s.Proxy.ListenPlain, L: plain})
	}
	return ls
}

// takeOverAndStart loads the embedded tiers' snapshots and starts serving,
// on the predecessor's sockets where one handed them over. With a
// snapshot to take over, the predecessor is told to go first and this
// process waits until it has drained and written the file, then loads it
// and only then accepts: clients wait in the sockets' backlogs meanwhile,
// and no write lands in the old store after the new one was loaded from
// it. Without one, this process serves first and the predecessor drains
// beside it, so nothing waits.
func (a *app) takeOverAndStart(h *handoff.Handoff, in inheritedSockets, sig <-chan os.Signal) error {
	if h != nil && h.Inherited() && a.hasSnapshot() {
		if err := h.Serve(a.handoffOffer); err != nil {
			in.closeAll()
			return err
		}
		a.log.Info("handoff: waiting for the predecessor to write its snapshot before accepting")
		select {
		case <-h.Gone():
		case <-time.After(a.drainTimeout() + predecessorSaveWait):
			a.log.Warn("handoff: the predecessor has not finished; loading what is on disk", "waited", a.drainTimeout()+predecessorSaveWait)
		}
		a.restoreSnapshots()
		return a.startOn(in)
	}
	a.restoreSnapshots()
	if err := a.startOn(in); err != nil {
		return err
	}
	if h != nil {
		if err := h.Serve(a.handoffOffer); err != nil {
			return errors.Join(err, a.shutdown(sig))
		}
	}
	return nil
}

// predecessorSaveWait is what a successor allows a predecessor beyond its
// drain for writing its snapshot (about 2 s per GiB here, see
// docs/planned-events.md).
const predecessorSaveWait = time.Minute

func (a *app) hasSnapshot() bool {
	for _, t := range a.tierHandles() {
		if t.store != nil && t.store.HasSnapshot() {
			return true
		}
	}
	return false
}

func (a *app) restoreSnapshots() {
	for _, t := range a.tierHandles() {
		t.restoreSnapshot(a.log)
	}
}

func (in inheritedSockets) closeAll() {
	for _, l := range []net.Listener{in.client, in.plain, in.link, in.admin} {
		if l != nil {
			_ = l.Close()
		}
	}
}
