// Package proxy is strata's data plane: gnet event loops that speak the
// memcached text and meta protocols to clients and hand each request to a
// tier.
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
// tier's delayed writes) is handed Server.RunOnLoop by the composer, which
// uses gnet's EventLoop.Execute.
//
// Seams: the server meets its tier through tiers.Tier only (Do, Phase).
// The memcached pools it lends its loops to (WithPools) are the only tiers
// that answer after Do returns; the server flushes them once per loop
// round, and orders a connection's requests by Phase only when it has
// some.
//
// Bounds: at most Config.MaxInflight requests wait per connection and at
// most Config.MaxOutboundBytes of replies; past either the connection is not
// read until it drains (gnet has no read back-pressure of its own, so the
// ticker wakes paused connections).
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
