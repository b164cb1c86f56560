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
// tier's delayed writes) is handed the server's loop runner at Start, which
// uses gnet's EventLoop.Execute.
//
// Bounds: at most Config.MaxInflight requests (and keys: a long multi-get
// comes from the parser in pieces) wait per connection and at most
// Config.MaxOutboundBytes of replies; past either the connection is not
// read until it drains (gnet has no read back-pressure of its own, so the
// ticker wakes paused connections).
package proxy
