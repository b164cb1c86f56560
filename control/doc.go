// Package control is strata's control plane at run time: everything that
// observes and steers the data plane without sitting on its request path.
//
// The tree:
//
//   - admin: the operator's HTTP interface. Health and readiness probes,
//     Prometheus metrics, and the /admin/v1 JSON API that reads the effective
//     configuration and tunes promotion and sampling while strata serves,
//     plus a small self-contained web page over the same API.
//   - store: the control plane's state behind one Store interface, in
//     memory or on etcd (store/etcdstore): versioned rows, watches,
//     leases, elections and fenced leader writes, versioned objects.
//   - locality/keyrule: a key's μ-shard id by the configured prefix rules,
//     shared by the proxy's router (request path, no allocation) and the
//     control plane (names, whole-rule pins).
//   - locality/loccache: each event loop's bounded μ-shard → owner cache,
//     the only part of locality routing a request touches.
//   - locality/loctable: the location table's rows in the store, created
//     once, moved by fenced epoch transitions (Prepare, Migrating,
//     Stable), with a journal of the moves not yet settled.
//   - locality/locsvc: the location service in every strata: the router's
//     Directory (coalesced reads of rows, creation through the placement
//     service, access counters shipped in batches) and the rows watch
//     that updates the routers' caches and acknowledges what they applied.
//   - locality/placesvc: the elected placement service: creates rows,
//     merges counters, decides with placement.Decide, carries moves
//     through their states and rolls a dead leader's journal forward;
//     its View answers the admin API's locality calls.
//   - shards: the shard-assignment loop. An agent in every strata applies
//     a managed tier's published maps and reports load, reachability and
//     the version applied; the tier's elected leader declares servers
//     dead, drained or back, runs the allocator (placement/assign) and
//     publishes versioned maps and the phases of moves.
//
// Dependencies point down: control packages never import proxy. What they
// read from or change in the data plane comes through small interfaces
// they declare, which cmd/strata implements over the running packages.
// Reading is done from plain counters and atomically published values, so
// the control plane adds no lock to a request.
package control
