// Package admin is strata's operator interface over HTTP: probes, metrics,
// and a JSON API to read the effective configuration and tune promotion and
// sampling while the proxy serves.
//
// Endpoints:
//
//	GET  /healthz                 the process is up (always 200)
//	GET  /readyz                  the endpoint accepts and every tier can serve: 200, else 503
//	GET  /metrics                 Prometheus text format, from the server's own registry
//	GET  /admin/v1/config         effective configuration, secrets redacted
//	GET  /admin/v1/promotion      {"threshold", "rules", "l1_max_ttl"}
//	PUT  /admin/v1/promotion      the fields given replace the current ones
//	GET  /admin/v1/sampler        {"rate", "dir", "records", "dropped"}
//	PUT  /admin/v1/sampler        {"rate"}
//	GET  /admin/v1/tiers          tiers, their servers, states and counters
//	GET  /admin/v1/sampler/report the sampler's live per-family report
//	GET  /admin/v1/shardmap?tier=T a managed tier's published shard map
//	POST /admin/v1/servers/drain   {"tier", "addr"}: empty a server
//	POST /admin/v1/servers/undrain {"tier", "addr"}: let it own shards again
//	POST /admin/v1/servers/maintenance {"tier", "addr"} or {"tier", "all": true}: drain, wait for a restart, undrain (202; one walk at a time, 409 while one runs)
//	GET  /admin/v1/servers/maintenance the walk in progress or the last: server, step, lines
//	DELETE /admin/v1/servers/maintenance cancel the walk where it stands
//	GET  /admin/v1/locality/mushards/{id}         a μ-shard: owner, epoch, state, counters by region, pin, history
//	POST /admin/v1/locality/mushards/{id}/migrate {"to"}: move it once (202: the placement service acts)
//	PUT  /admin/v1/locality/mushards/{id}/pin     {"region"}: pin it ("" unpins)
//	GET  /admin/v1/locality/migrations            the moves in flight
//	GET  /admin/v1/locality/regions               requests and remote fraction by region, μ-shards owned
//	GET  /admin/v1/               the endpoints this server has (the page asks only for those)
//	GET  /admin/v1/history        per-second headline figures since the process started (?since=ms)
//	GET  /admin/v1/promotion/model P(promoted within k L2 hits) at the N in force and at the observed rate
//	GET  /admin/v1/topkeys        the busiest sampled keys of the last minute (?n=20)
//	GET  /                        the operator's page (static/: HTML, CSS, script; no external asset)
//
// A path segment spelt {id} is a wildcard: it matches one non-empty
// segment of the escaped path and is handed over unescaped, so a μ-shard
// name ("prefix field") travels URL-escaped, a "/" in it as %2F.
//
// Every reply is JSON except /metrics and /. Errors are
// {"error": "...", "field": "..."} with 400 for a bad body or an
// out-of-range value (field names it; a string that is not UTF-8 is
// refused so, never stored as U+FFFD), 413 for a body over 1 MiB, 401 for a missing or wrong token,
// 403 for a mutating call from a page of another origin, 404 for an
// unknown path (and, with field "tier", for a tier the control plane does
// not manage; with field "id", for a μ-shard without a row), 405 for a
// method the path does not take, 409 for a maintenance walk the pool's
// state refuses (a server not up, one not answering, a walk running), 501 from a locality endpoint while
// locality routing is off and 503 when the control plane's state store
// fails.
//
// Origin: every mutating request (any method but GET, HEAD and OPTIONS, on
// any path) that a browser marks as coming from another page — by
// Sec-Fetch-Site other than same-origin or none, or an Origin that is not
// this server's host — is refused before routing, token or not. Clients
// that are not browsers send neither header and are judged by the token.
//
// Auth: when a token is configured, every /admin/v1 request must carry
// "Authorization: Bearer <token>"; it is compared in constant time. The
// probes and /metrics stay open. A listener that is not on loopback is
// refused at construction unless a token is set. With Config.TLS the
// listener serves HTTPS only, with Deps.TLS (the memcached listener's
// configuration, so one reload reaches both); Listener stays the TCP
// socket, what a handoff duplicates.
//
// Data flow and goroutines: the server owns the net/http goroutines it
// starts in Start and stops them in Stop, and, when Deps.Metrics is set,
// a history.Recorder that reads the metrics snapshot every second from
// Start to Stop on Deps.Clock's goroutine (in strata the stall
// heartbeat's; package history keeps the bounded series), and
// the goroutine of a maintenance walk (maintenance_run.go), at most one,
// from its POST until it ends, is cancelled (DELETE) or Stop cancels it
// and waits for it. It reads and changes the data
// plane only through the interfaces of Deps, which the caller implements
// over values the data plane publishes atomically (a promotion policy, a
// sample rate); a PUT takes effect for the next request the proxy handles
// and never touches a client connection. Every change made through the
// API is logged with its old and new value.
//
// Metrics are collected at scrape time by Collector from a Snapshot the
// MetricsSource fills from plain counters: nothing is counted twice and
// the request path takes no lock for metrics. Labels come from fixed sets
// (operation classes, results, tier names, configured servers), never from
// keys.
//
// Client is the other side: a typed client of the same API (package ctl,
// which is strata ctl, uses it), whose error replies are *APIError with
// the field the server named.
package admin
