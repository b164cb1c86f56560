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
//     once, moved by fenced epoch transitions.
//   - shards: the shard-assignment loop. An agent in every strata applies
//     a managed tier's published maps and reports load, reachability and
//     the version applied; the tier's elected leader declares servers
//     dead, drained or back, runs the allocator (placement/assign) and
//     publishes versioned maps and the phases of moves.
//
// Later parts of the control plane (the location service that fills the
// caches, access-counter shipping, the placement loop, the migration
// journal) live in sibling packages.
//
// Dependencies point down: control packages never import proxy. What they
// read from or change in the data plane comes through small interfaces
// they declare, which cmd/strata implements over the running packages.
// Reading is done from plain counters and atomically published values, so
// the control plane adds no lock to a request.
package control
