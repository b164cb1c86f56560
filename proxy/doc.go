// Package proxy is strata's data plane: gnet event loops that speak the
// memcached text, meta and binary protocols to clients and hand each
// request to a tier. A connection's first byte picks binary or text for its
// life (in the parser); both go through the same reply queue and bounds.
//
// Authentication (auth.go): with Config.Auth a connection's parser refuses
// everything until the client authenticates against proxy/auth's users; a
// failed attempt's reply may be held on a timer, which hands its release
// back to the connection's loop (RunOnLoop), so no loop ever waits.
//
// A client's bytes are parsed on its event loop by proxy/protocol, every
// complete request gets a slot at the tail of the connection's reply queue,
// and its operations go to the tier. Replies leave from the head of the
// queue only, so they keep request order however the tiers complete them.
// Replies completed during one callback are written with one write.
//
// Ownership: a connection's state belongs to its event loop; nothing else
// touches it, so it has no lock. Bytes borrowed from gnet (Peek) are copied
// by the parser before Discard. A tier completes operations on the loop that
// issued them; a tier that must resume work on another loop (the layered
// tier's delayed writes) does so through the loop handle it was built
// with (Loops.Run, which uses gnet's EventLoop.Execute).
//
// Loops (loops.go): the handle on the server's event loops is made first
// (NewLoops), handed to every tier constructor that needs it, and then
// to New, which binds it to the server; gnet's loops behind it exist once
// the engine boots. Users of the loops — the memcached pools and the
// region-link client, which keep connections on them and batch writes —
// join the handle in their own constructors (memcached.Loops.Join), and
// the server starts exactly those once booted, before the first client is
// accepted, and flushes them once per loop round. There is no list of
// pools to pass, so none can be left out; joining closes at New.
//
// Seams: the server meets its tier through tiers.Tier only (Do, Phase).
// The users of its loops are the only tiers that answer after Do
// returns; the server orders a connection's requests by Phase only when
// its loops have some.
//
// Accepting: the server listens itself and registers each connection with
// gnet (listen.go). At the descriptor limit it stops accepting, keeps
// serving, and accepts again once a connection closes or a back-off
// passes; Ready reports the pause. The listener sets SO_REUSEADDR, so a
// restart binds at once. Addr is the bound address, so a server configured
// on port 0 says which port it got. The accept goroutine is the Server's:
// Stop and Drain close the listener and wait for it.
// gnet runs each registration on its process-wide goroutine pool, which
// ticks while open; enrolpool.go keeps it closed between connections.
//
// Memory per idle connection (slots.go, scavenge.go): what a request needs
// (slot, parser, ordering counts) is lent by the loop while the connection
// has one in flight, so an idle connection keeps its conn and gnet's
// state only. Once a burst of at least 1,024 accepts has been quiet for
// half a second, a one-shot timer returns the garbage the accepts left to
// the OS, at most every 30 s and only when the collection costs little
// next to what it returns; Stop disarms it.
//
// Region links (link.go): WithLink adds a second listener whose
// connections join the same engine, loops and tiers; every request parsed
// on them is marked as a link request, with the location epoch or source
// marker of its meta opaque token, for the locality tier, whose link
// client is a user of the loops like a pool.
//
// TLS (tls.go, tls_backend.go): with Config.TLS the client listener
// handshakes each connection on a goroutine and then processes its
// records on the loop (internal/tlsconn), under the same parser, bounds
// and reply queue; the link listener (WithLinkTLS) does the same, and a
// pool or link client that handshook a dialled connection hands Attach a
// tlsconn.Handoff. ListenPlain adds a plaintext listener beside.
// refresh_certs (refresh_certs.go) reloads the files off the loop, the
// request's slot held until the answer comes back; TLSConfig lends the
// listener's configuration to the admin API. Handshakes are counted by
// side (tlsconn.Counts): the client listener's store, linkTLS.
//
// Bounds (pause.go): at most Config.MaxInflight requests (and keys: a
// long multi-get comes from the parser in pieces) wait per connection, and at most Config.MaxOutboundBytes of replies, counted in
// bytes before each request is parsed (written but unsent, formatted, and
// an estimate for replies still due from a tier). Past either the
// connection is not parsed; gnet has no read back-pressure, so its bytes
// wait in gnet's inbound buffer, up to the bound plus one largest request,
// past which a client that neither reads nor stops is disconnected. Its
// loop resumes it once its output is below half the bound. One callback
// parses at most 64 KiB and formats at most 256 KiB before yielding the
// loop to its other connections.
//
// Stalls (stall.go): when the process stops and resumes for longer than
// internal/stall's threshold (500ms), the requests a connection had
// buffered unparsed or that reached it meanwhile may be from clients that
// gave up; a write among them is answered "SERVER_ERROR request held
// through a process stall" and never reaches a tier, and one parsed
// before the stall and held for ordering is refused the same way. Every
// Op handed to a tier is stamped with the generation it was read under
// (tiers.Op.Stall), so the pools and the link client refuse a write a
// tier parked across a later stall. Each
// loop learns of a stall with one atomic load per callback, or from the
// watcher (watch.go); counting a connection's held bytes costs one ioctl per
// connection, once per stall.
//
// Deviation from memcached: memcached stops reading a socket whose replies
// back up, and TCP then slows its client; strata cannot stop gnet reading,
// so a client that pipelines more than about MaxOutboundBytes plus one
// request ahead of what it reads is disconnected instead of slowed.
//
// Answered by the proxy itself: version (memcached's version, 1.6.18),
// stats and its sections (stats_sections.go: memcached's general fields
// from the per-loop counters, settings, sizes, conns, detail, reset; the
// WithStats hook adds the tiers' lines), and the administration commands
// the parser accepted (inspect.go: me, lru_crawler crawl and metadump go
// to the Inspector given by WithInspector, usually the tier of record).
// These run on the requesting connection's loop; the Inspector bounds its
// own work. stats conns reads a registry of connections (a sync.Map
// written when one opens or closes, and one atomic store per request).
package proxy
