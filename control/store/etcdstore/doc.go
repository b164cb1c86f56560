// Package etcdstore is the control-plane store on etcd (v3 API, the
// v3.5 client; it talks to 3.4 and 3.5 servers), for a strata fleet: the
// users' fleets already run etcd, and its client brings the leases,
// watches and elections the control plane needs.
//
// Mapping onto etcd:
//   - every key gets Config.Prefix in front (default "strata/");
//   - a Txn is one etcd transaction whose else branch reads the keys of
//     its conditions, so a failed compare-and-swap returns what it lost
//     to in the same round trip;
//   - a Session is a concurrency.Session whose lease is renewed by one
//     keepalive request every TTL/3 or so, on the process's timer grid
//     (gridLease), not by the client's keepalive loops; Close on the
//     Store does not revoke it, so a process that exits without cleaning
//     up behaves as one that died: its rows go after the TTL;
//   - GrantLease is a plain Grant, never kept alive;
//   - Campaign is concurrency.Election under ElectionPrefix(name); its
//     Fence compares the election key's create revision;
//   - a Watch is an etcd watch stream from a revision; the client resumes
//     it after a disconnection, and when the revisions it needs were
//     compacted meanwhile the watch re-reads the prefix and delivers a
//     Reset.
//
// Failure behaviour: requests wait for a connection until their context
// ends (the client retries the dial with a backoff capped at
// Config.MaxBackoff); a hung server is detected by gRPC keepalive pings
// within about twice Config.KeepAlive.
//
// Goroutines: the etcd client owns its goroutines (connection, watch
// streams); Store.Close ends them. Each session owns one that renews its
// lease and ends with the session, the client, or the lease. Each won election
// owns one goroutine that closes Leadership.Done and ends with the
// session or on Resign. Each Campaign call owns one that ends when the
// call returns, and one that runs the campaign: when the caller gives up
// first, that one withdraws the candidate (or resigns a win nobody took)
// and ends when etcd answers or the client closes.
package etcdstore
