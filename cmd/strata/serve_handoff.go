package main

import (
	"log/slog"
	"net"

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
