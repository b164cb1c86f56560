// Package store is the control plane's state: versioned rows under
// prefixes, watches, liveness leases, leader elections and fenced leader
// writes, behind one Store interface with two implementations that pass
// one test suite (storetest): Memory here, for a strata that runs alone
// (the default), and etcdstore, for a fleet.
//
// What flows through it: the location table, shard maps, hot-key marks,
// tuned thresholds and migration journals are rows; controllers write
// them, every strata watches them.
//
// Using it, in the order a control loop does:
//
//  1. Connect a client (Memory.Connect, or etcdstore.New). Consumers take
//     the smallest interface they need: Reader, Writer, Watcher,
//     Sessions, Leases, Elections.
//  2. NewSession grants a lease kept alive while the process lives. Rows
//     put with it (PutLease) vanish when the process dies: a proxy's
//     liveness row. GrantLease grants one that nobody keeps alive: rows
//     put with it vanish a TTL after the grant unless put again with a
//     newer lease (a hot-key mark held while anyone still reports it).
//  3. Campaign blocks until the session leads the loop's election; the
//     leader is the candidate row created first under ElectionPrefix.
//     Observers find it with Leader or by watching that prefix.
//  4. Every write of the leader carries its Fence (FencedTxn, Publish):
//     the election key's create revision, which holds exactly as long as
//     that leadership lasts, so a deposed leader that does not yet know it
//     cannot write. Leadership.Done tells it, eventually; the fence does
//     not depend on that.
//  5. Objects that only move forward (maps) are versioned rows: Publish
//     writes version N only over N-1; WatchVersioned delivers strictly
//     growing versions even when a watch re-reads old state.
//
// Revisions are the store's (etcd's) global counter: every transaction
// that changes something makes exactly one. A watch (Watch) is pulled by
// its consumer's goroutine: Next delivers whole revisions in order,
// resumes after a disconnection where it left off, and delivers a Reset
// snapshot when the history it needed was compacted. See Watch.Next for
// the contract.
//
// Time: Memory measures lease deadlines on an injected clock
// (MemoryOptions.Now); decisions that depend on time live in the loops,
// not here.
//
// Goroutines: Memory starts none. A won election owns one goroutine that
// closes Leadership.Done and ends with the session or on Resign. etcd's
// client owns its own (keepalives, watch streams); Close ends them.
package store
